# Style: F.cross_entropy on the masked logits with the positives as class targets, the
# views normalised separately; a self-test block.
import torch
import torch.nn.functional as F

__all__ = ["nt_xent"]


def nt_xent(z1, z2, temperature=0.5):
    n = z1.size(0)
    a = F.normalize(z1, dim=-1)
    b = F.normalize(z2, dim=-1)
    z = torch.cat((a, b))
    sim = torch.mm(z, z.t()).div(temperature)
    sim = sim.masked_fill(torch.eye(2 * n, dtype=torch.bool, device=z.device), float("-inf"))
    targets = torch.cat((torch.arange(n, 2 * n), torch.arange(0, n))).to(z.device)
    return F.cross_entropy(sim, targets)


if __name__ == "__main__":
    z1 = torch.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    z2 = torch.tensor([[0.9, 0.1], [0.2, 1.0], [1.0, 0.8]])
    print(nt_xent(z1, z2))  # tensor(1.0672)
