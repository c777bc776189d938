# Style: norms divided out by hand, diagonal masked to -inf, positives by index (i + N) mod 2N, logsumexp minus the positive logit.
import torch


def nt_xent(z1, z2, temperature=0.5):
    n = z1.shape[0]
    z = torch.cat([z1, z2], dim=0)
    z = z / z.norm(dim=1, keepdim=True)
    logits = (z @ z.T) / temperature  # (2N, 2N) cosine similarities over tau
    self_mask = torch.eye(2 * n, dtype=torch.bool, device=z.device)
    logits = logits.masked_fill(self_mask, float("-inf"))
    idx = torch.arange(2 * n, device=z.device)
    partner = (idx + n) % (2 * n)
    positive = logits[idx, partner]
    return (torch.logsumexp(logits, dim=1) - positive).mean()


if __name__ == "__main__":
    z1 = torch.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    z2 = torch.tensor([[0.9, 0.1], [0.2, 1.0], [1.0, 0.8]])
    print(nt_xent(z1, z2), nt_xent(z1, z2, temperature=0.1), nt_xent(z1[:1], z2[:1]))
