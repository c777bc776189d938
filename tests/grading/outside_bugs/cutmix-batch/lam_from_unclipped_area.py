# Bug: lam is computed from the requested box area h * w instead of the clipped area, so a box hanging over the edge gives too much weight to the partner's label; a correct version uses (y1 - y0) * (x1 - x0).
import torch
import torch.nn.functional as F


def _span(centre, size, length):
    # The box covers [centre - size // 2, centre - size // 2 + size); clip both ends to the
    # image, so a box hanging over an edge pastes only its inside part (possibly nothing).
    start = centre - size // 2
    return min(max(start, 0), length), min(max(start + size, 0), length)


def _mix_labels(labels, num_classes, perm, lam, dtype):
    # Each image's target is its own class with weight lam and its partner's with 1 - lam.
    own = F.one_hot(labels, num_classes).to(dtype)
    return lam * own + (1 - lam) * own[perm]


def cutmix(images, labels, num_classes, perm, box):
    _, _, height, width = images.shape
    cy, cx, h, w = box
    y0, y1 = _span(cy, h, height)
    x0, x1 = _span(cx, w, width)
    mixed = images.clone()  # never write into the caller's batch
    mixed[:, :, y0:y1, x0:x1] = images[perm, :, y0:y1, x0:x1]
    # lam is the share of each image that is still its own: the clipped area, not h * w.
    lam = 1 - h * w / (height * width)
    return mixed, _mix_labels(labels, num_classes, perm, lam, images.dtype)


def mixup(images, labels, num_classes, perm, lam):
    mixed = lam * images + (1 - lam) * images[perm]
    return mixed, _mix_labels(labels, num_classes, perm, lam, images.dtype)
