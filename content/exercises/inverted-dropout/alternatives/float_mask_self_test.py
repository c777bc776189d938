# Style: a float 0/1 mask scaled once by 1/(1-p) and multiplied in; float32 draws whatever x's dtype; a __main__ self-test.
import torch


def _keep_mask(shape, p, generator, device):
    u = torch.empty(shape, device=device).uniform_(0.0, 1.0, generator=generator)
    return (u >= p).float()


def dropout(x, p, training=True, generator=None):
    if not training:
        return x.clone()
    if p >= 1.0:
        return torch.zeros_like(x)
    scale = 1.0 / (1.0 - p)
    mask = _keep_mask(x.shape, p, generator, x.device).to(x.dtype)
    return x * (mask * scale)


if __name__ == "__main__":
    g = torch.Generator().manual_seed(0)
    print(dropout(torch.ones(2, 8), p=0.25, generator=g))
    print(dropout(torch.ones(3), p=0.25, training=False))
    big = dropout(torch.ones(200_000), p=0.3, generator=torch.Generator().manual_seed(1))
    print("zero rate:", (big == 0).float().mean().item(), "kept value:", big.max().item())
    print("p=1:", dropout(torch.ones(4), p=1.0, generator=g))
    print("empty:", dropout(torch.ones(0, 3), p=0.5, generator=g).shape)
