import torch
import torch.nn.functional as F


def cutmix(
    images: torch.Tensor,
    labels: torch.Tensor,
    num_classes: int,
    perm: torch.Tensor,
    box: tuple[int, int, int, int],
) -> tuple[torch.Tensor, torch.Tensor]:
    """images: (B, C, H, W) float; labels: (B,) int64; perm: (B,) int64 partner of each image;
    box: (cy, cx, h, w) ints. Returns (mixed images (B, C, H, W), soft labels (B, num_classes))."""
    raise NotImplementedError


def mixup(
    images: torch.Tensor, labels: torch.Tensor, num_classes: int, perm: torch.Tensor, lam: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """The same inputs and outputs, with lam in [0, 1] instead of a box."""
    raise NotImplementedError
