# Style: a loop over the images, float64 arithmetic for the labels with scatter_add_; __main__ self-test.
import torch


def _bounds(c, s, n):
    lo = max(0, c - s // 2)
    hi = min(n, c - s // 2 + s)
    return (lo, hi) if hi > lo else (0, 0)


def _soft(labels, num_classes, perm, lam, dtype):
    soft = torch.zeros(len(labels), num_classes, dtype=torch.float64)
    soft.scatter_add_(1, labels[:, None], torch.full((len(labels), 1), float(lam),
                                                     dtype=torch.float64))  # fmt: skip
    soft.scatter_add_(1, labels[perm][:, None], torch.full((len(labels), 1), 1.0 - lam,
                                                           dtype=torch.float64))  # fmt: skip
    return soft.to(dtype)


def cutmix(images, labels, num_classes, perm, box):
    cy, cx, h, w = box
    H, W = images.shape[2], images.shape[3]
    y0, y1 = _bounds(cy, h, H)
    x0, x1 = _bounds(cx, w, W)
    rows = []
    for i in range(images.shape[0]):
        img = images[i].clone()
        if y1 > y0 and x1 > x0:
            img[:, y0:y1, x0:x1] = images[int(perm[i]), :, y0:y1, x0:x1]
        rows.append(img)
    mixed = torch.stack(rows)
    lam = 1.0 - (y1 - y0) * (x1 - x0) / float(H * W)
    return mixed, _soft(labels, num_classes, perm, lam, images.dtype)


def mixup(images, labels, num_classes, perm, lam):
    partner = images.index_select(0, perm)
    return images * lam + partner * (1.0 - lam), _soft(labels, num_classes, perm, lam,
                                                       images.dtype)  # fmt: skip


if __name__ == "__main__":
    x = torch.arange(32.0).reshape(2, 1, 4, 4)
    print(cutmix(x, torch.tensor([0, 2]), 3, torch.tensor([1, 0]), (0, 3, 3, 2)))
