# Style: float64 arithmetic inside (addmm/mm), transposed-weight layout, results cast back to the dtype.
import torch


def _f64(t: torch.Tensor) -> torch.Tensor:
    return t.to(torch.float64)


def forward(params: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    h = torch.relu(torch.addmm(_f64(params["b1"]), _f64(x), _f64(params["w1"]).t()))
    pred = torch.addmm(_f64(params["b2"]), h, _f64(params["w2"]).t())
    return pred.to(x.dtype)


def loss_and_grads(
    params: dict[str, torch.Tensor], x: torch.Tensor, y: torch.Tensor
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    w1, b1, w2, b2 = (_f64(params[k]) for k in ("w1", "b1", "w2", "b2"))
    x64, y64 = _f64(x), _f64(y)
    n_elems = y64.numel()

    a1 = torch.addmm(b1, x64, w1.t())  # (N, H)
    mask = a1 > 0
    h = a1 * mask
    resid = torch.addmm(b2, h, w2.t()) - y64  # (N, O)
    loss = resid.pow(2).sum() / n_elems

    g_out = resid * (2.0 / n_elems)
    g_w2 = torch.mm(g_out.t(), h)
    g_b2 = g_out.sum(0)
    g_a1 = torch.mm(g_out, w2) * mask
    g_w1 = torch.mm(g_a1.t(), x64)
    g_b1 = g_a1.sum(0)

    grads = {"w1": g_w1, "b1": g_b1, "w2": g_w2, "b2": g_b2}
    return loss.to(y.dtype), {k: v.to(params[k].dtype) for k, v in grads.items()}


def sgd_step(
    params: dict[str, torch.Tensor], grads: dict[str, torch.Tensor], lr: float
) -> dict[str, torch.Tensor]:
    return {k: (_f64(p) - lr * _f64(grads[k])).to(p.dtype) for k, p in params.items()}
