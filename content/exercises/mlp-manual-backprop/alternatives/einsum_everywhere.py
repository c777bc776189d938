# Style: every product written as an einsum with named axes; __all__ lists the public functions.
import torch

__all__ = ["forward", "loss_and_grads", "sgd_step"]


def _hidden_pre(params: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    return torch.einsum("nd,hd->nh", x, params["w1"]) + params["b1"]


def forward(params: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    h = torch.clamp(_hidden_pre(params, x), min=0)
    return torch.einsum("nh,oh->no", h, params["w2"]) + params["b2"]


def loss_and_grads(
    params: dict[str, torch.Tensor], x: torch.Tensor, y: torch.Tensor
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    z = _hidden_pre(params, x)
    h = torch.clamp(z, min=0)
    pred = torch.einsum("nh,oh->no", h, params["w2"]) + params["b2"]
    err = pred - y
    loss = torch.einsum("no,no->", err, err) / err.numel()

    d_pred = err * (2.0 / err.numel())
    d_w2 = torch.einsum("no,nh->oh", d_pred, h)
    d_b2 = torch.einsum("no->o", d_pred)
    d_h = torch.einsum("no,oh->nh", d_pred, params["w2"])
    d_z = d_h * (z > 0).to(d_h.dtype)  # relu'(0) = 0
    d_w1 = torch.einsum("nh,nd->hd", d_z, x)
    d_b1 = torch.einsum("nh->h", d_z)
    return loss, {"w1": d_w1, "b1": d_b1, "w2": d_w2, "b2": d_b2}


def sgd_step(
    params: dict[str, torch.Tensor], grads: dict[str, torch.Tensor], lr: float
) -> dict[str, torch.Tensor]:
    return {name: torch.sub(p, grads[name], alpha=lr) for name, p in params.items()}
