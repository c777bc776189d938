# Style: a boolean (H, W) mask built from aranges and torch.where; labels from an identity matrix.
import torch


def _inside(centre, size, length):
    idx = torch.arange(length)
    start = centre - size // 2
    return (idx >= start) & (idx < start + size)


def cutmix(images, labels, num_classes, perm, box):
    cy, cx, h, w = box
    H, W = images.shape[-2:]
    mask = _inside(cy, h, H)[:, None] & _inside(cx, w, W)[None, :]
    mixed = torch.where(mask, images[perm], images)
    lam = 1.0 - mask.sum().item() / (H * W)
    eye = torch.eye(num_classes, dtype=images.dtype)
    return mixed, lam * eye[labels] + (1.0 - lam) * eye[labels[perm]]


def mixup(images, labels, num_classes, perm, lam):
    eye = torch.eye(num_classes, dtype=images.dtype)
    return torch.lerp(images[perm], images, lam), lam * eye[labels] + (1 - lam) * eye[
        labels[perm]
    ]
