# Style: a mask drawn on a zero-padded canvas and cropped back (no explicit clipping); labels via one_hot and einsum; __all__.
import torch
import torch.nn.functional as F

__all__ = ["cutmix", "mixup"]


def _box_mask(H, W, box):
    cy, cx, h, w = box
    pad_y, pad_x = h + abs(cy) + 1, w + abs(cx) + 1
    canvas = torch.zeros(H + 2 * pad_y, W + 2 * pad_x, dtype=torch.bool)
    top, left = cy - h // 2 + pad_y, cx - w // 2 + pad_x
    canvas[top : top + h, left : left + w] = True
    return canvas[pad_y : pad_y + H, pad_x : pad_x + W]


def _labels(labels, num_classes, perm, lam, dtype):
    pair = torch.stack([F.one_hot(labels, num_classes), F.one_hot(labels[perm], num_classes)])
    weights = torch.tensor([lam, 1.0 - lam], dtype=torch.float64)
    return torch.einsum("p,pbk->bk", weights, pair.double()).to(dtype)


def cutmix(images, labels, num_classes, perm, box):
    H, W = images.shape[-2:]
    mask = _box_mask(H, W, box).to(images.dtype)
    mixed = images * (1 - mask) + images[perm] * mask
    lam = 1.0 - float(mask.sum()) / (H * W)
    return mixed, _labels(labels, num_classes, perm, lam, images.dtype)


def mixup(images, labels, num_classes, perm, lam):
    mixed = images + (1.0 - lam) * (images[perm] - images)
    return mixed, _labels(labels, num_classes, perm, lam, images.dtype)
