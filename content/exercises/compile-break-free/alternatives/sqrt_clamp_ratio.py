# Style: norm as sqrt of the row sum of squares; the scale is the ratio max_norm / norm
# clamped at 1 (zero rows give inf -> 1), the count a sum over a boolean mask.
import torch


def clip_rows(x: torch.Tensor, max_norm: float) -> tuple[torch.Tensor, torch.Tensor]:
    norms = (x * x).sum(dim=1, keepdim=True).sqrt()  # (N, 1)
    over = norms > max_norm
    ratio = torch.clamp(max_norm / norms, max=1.0)
    scale = torch.where(over, ratio, torch.ones_like(ratio))
    count = over.sum(dtype=torch.int64)
    return x * scale, count
