import torch

from sandbox.grading import case, edge, expect_close, fail, gradients, nontrivial, performance
from sandbox.grading import prop, shapes, values


def batch(d, *, b=None, hw=None, box=None, identity=False, classes=None):
    """A batch, its labels, a partner permutation and a box. By default the box's centre is
    anywhere in the image or up to 3 pixels past an edge, and its size up to the image's."""
    n = b if b is not None else d.size(1, 9)
    c = d.choice([1, 3])
    h, w = hw if hw is not None else (d.size(1, 12), d.size(1, 12))
    k = classes if classes is not None else d.integer(2, 10)
    images = d.tensor((n, c, h, w), normal=True)
    labels = d.integers((n,), 0, k)
    perm = torch.arange(n) if identity else torch.tensor(d.permutation(n), dtype=torch.int64)
    if box is None:
        box = (d.integer(-3, h + 2), d.integer(-3, w + 2), d.integer(0, h), d.integer(0, w))
    return case(images, labels, k, perm, tuple(box))


def span(centre, size, length):
    """The statement's clipping, written out: the rows (or columns) the box covers."""
    return [i for i in range(centre - size // 2, centre - size // 2 + size) if 0 <= i < length]


def trusted_cutmix(c):
    """Pixel by pixel in float64, in the grader."""
    images, labels, k, perm, (cy, cx, h, w) = c.args
    n, _, height, width = images.shape
    rows, cols = span(cy, h, height), span(cx, w, width)
    x = images.double()
    out = x.clone()
    for i in range(n):
        for r in rows:
            for q in cols:
                out[i, :, r, q] = x[int(perm[i]), :, r, q]
    lam = 1 - len(rows) * len(cols) / (height * width)
    soft = torch.zeros(n, k, dtype=torch.float64)
    for i in range(n):
        soft[i, int(labels[i])] += lam
        soft[i, int(labels[perm[i]])] += 1 - lam
    return out.to(images.dtype), soft.to(images.dtype)


def mixing(d, *, lam=None, identity=False):
    c = batch(d, identity=identity)
    images, labels, k, perm, _ = c.args
    return case(images, labels, k, perm, lam if lam is not None else d.number(0.0, 1.0))


def trusted_mixup(c):
    images, labels, k, perm, lam = c.args
    x = images.double()
    eye = torch.eye(k, dtype=torch.float64)
    out = lam * x + (1 - lam) * x[perm]
    soft = lam * eye[labels] + (1 - lam) * eye[labels[perm]]
    return out.to(images.dtype), soft.to(images.dtype)


def edge_box(d):
    """A box centred within two pixels of a drawn edge or corner, of odd or even size."""
    h, w = d.size(3, 12), d.size(3, 12)
    cy = d.choice([0, 1, h - 1, h - 2, d.integer(0, h - 1)])
    cx = d.choice([0, 1, w - 1, w - 2, -1, w])
    return batch(d, hw=(h, w), box=(cy, cx, d.integer(1, h + 2), d.integer(1, w + 2)))


def outside_box(d):
    """The box lies wholly outside the image: nothing is pasted and lam = 1."""
    h, w = d.size(2, 9), d.size(2, 9)
    side = d.integer(0, 3)
    box = [(-3, 2, 2, 2), (h + 1, 2, 3, 3), (2, -4, 2, 3), (2, w + 2, 4, 2)][side]
    return batch(d, hw=(h, w), box=box)


def covering_box(d):
    """The box covers the whole image: lam = 0, every label is the partner's."""
    h, w = d.size(1, 9), d.size(1, 9)
    return batch(d, hw=(h, w), box=(h // 2, w // 2, 2 * h + 1, 2 * w + 1))


def empty_box(d):
    """h = 0 or w = 0: nothing is pasted."""
    c = batch(d)
    images, labels, k, perm, (cy, cx, h, w) = c.args
    return case(images, labels, k, perm, (cy, cx, 0, w) if d.case % 2 else (cy, cx, h, 0))


def pasted_region_and_rest(sol, c):
    """Inside the clipped box every pixel comes from the partner, outside from the image
    itself, and each soft label puts exactly the unpasted share on the image's own class."""
    images, labels, k, perm, (cy, cx, h, w) = c.args
    mixed, soft = sol.call("cutmix", *c.args)
    rows, cols = span(cy, h, images.shape[2]), span(cx, w, images.shape[3])
    inside = torch.zeros(images.shape[2:], dtype=torch.bool)
    for r in rows:
        inside[r, cols] = True
    expect_close(mixed[..., inside], images[perm][..., inside], "pixels inside the box")
    expect_close(mixed[..., ~inside], images[..., ~inside], "pixels outside the box")
    expect_close(soft.sum(dim=1), torch.ones(len(labels), dtype=soft.dtype), "soft label sums")
    lam = 1 - inside.sum().item() / inside.numel()
    differ = labels != labels[perm]
    own = soft[torch.arange(len(labels)), labels]
    expect_close(own[differ], torch.full_like(own[differ], lam), "weight of each own class")


def soft_labels_are_convex(sol, c):
    _, labels, k, perm, lam = c.args
    _, soft = sol.call("mixup", *c.args)
    if soft.shape != (len(labels), k):
        fail(f"soft labels of shape {tuple(soft.shape)}, expected {(len(labels), k)}")
    expect_close(soft.sum(dim=1), torch.ones(len(labels), dtype=soft.dtype), "soft label sums")
    if bool((soft < 0).any()):
        fail("a soft label has a negative weight")


def mixed_only(name):
    def run(sol, c):
        return sol.call(name, *c.args)[0]

    return run


TIMED = torch.randn(32, 3, 32, 32, generator=torch.Generator().manual_seed(0))


def timed(d):
    """A CIFAR-sized batch of 32 and a 16x16 box."""
    perm = torch.tensor(d.permutation(32), dtype=torch.int64)
    return case(TIMED, d.integers((32,), 0, 10), 10, perm,
                (d.integer(0, 31), d.integer(0, 31), 16, 16))  # fmt: skip


DECLARATIONS = [
    values("cutmix pastes the box and mixes the labels", "cutmix", batch,
           expect=trusted_cutmix, visible=True, dtypes=("float32", "float64"), cases=3,
           description="boxes anywhere, partly outside the image too"),
    values("cutmix: drawn batches match the reference", "cutmix",
           lambda d: batch(d, b=d.size(2, 16), hw=(d.size(4, 24), d.size(4, 24))),
           dtypes=("float32", "float64"), cases=4),
    edge("a box near an edge or a corner is clipped", "cutmix", edge_box,
         expect=trusted_cutmix, dtypes=("float64",), cases=6,
         description="lam is computed from the clipped area"),
    edge("a box wholly outside the image", "cutmix", outside_box, expect=trusted_cutmix,
         cases=4),
    edge("a box covering the whole image", "cutmix", covering_box, expect=trusted_cutmix,
         cases=2),
    edge("a box of height or width 0", "cutmix", empty_box, expect=trusted_cutmix, cases=2),
    edge("the identity permutation", "cutmix", lambda d: batch(d, identity=True),
         expect=trusted_cutmix, cases=2),
    edge("a batch of one image", "cutmix", lambda d: batch(d, b=1), expect=trusted_cutmix,
         cases=2),
    shapes("cutmix's outputs: shapes and dtypes", "cutmix", batch,
           dtypes=("float32", "float64"), cases=2),
    gradients("cutmix's gradient with respect to the images", "cutmix",
              lambda d: batch(d, b=d.size(2, 5), hw=(d.size(2, 6), d.size(2, 6))), cases=2),
    prop("inside the box the partner, outside the image itself", pasted_region_and_rest,
         lambda d: batch(d, b=d.size(2, 9)), cases=4),
    nontrivial("cutmix's images are not zero", mixed_only("cutmix"), batch),
    values("mixup blends images and labels", "mixup", mixing, expect=trusted_mixup,
           visible=True, dtypes=("float32", "float64"), cases=3),
    edge("mixup with lam 0 and lam 1", "mixup",
         lambda d: mixing(d, lam=(0.0, 1.0)[d.case % 2]), expect=trusted_mixup, cases=2),
    edge("mixup with the identity permutation", "mixup", lambda d: mixing(d, identity=True),
         expect=trusted_mixup, cases=2),
    gradients("mixup's gradient with respect to the images", "mixup",
              lambda d: mixing(d), cases=2),
    prop("mixup's soft labels are convex weights", soft_labels_are_convex, mixing, cases=2),
    nontrivial("mixup's images are not zero", mixed_only("mixup"), mixing),
    performance("time against the reference", "cutmix", timed,
                description="a batch of 32 images 3x32x32 and a 16x16 box; reported with its "
                "spread, not graded in this exercise"),
]
