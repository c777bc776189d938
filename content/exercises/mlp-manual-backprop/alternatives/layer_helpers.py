# Style: small forward/backward helper functions per layer (linear, relu, mse), chained by hand; self-test.
import torch


def linear_fwd(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return x @ w.T + b


def linear_bwd(
    d_out: torch.Tensor, x: torch.Tensor, w: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Returns (d_x, d_w, d_b) of out = x @ w.T + b."""
    return d_out @ w, d_out.T @ x, d_out.sum(dim=0)


def relu_fwd(z: torch.Tensor) -> torch.Tensor:
    return torch.where(z > 0, z, torch.zeros_like(z))


def relu_bwd(d_out: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    return torch.where(z > 0, d_out, torch.zeros_like(d_out))


def mse_fwd(pred: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return ((pred - y) ** 2).mean()


def mse_bwd(pred: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return 2.0 * (pred - y) / pred.numel()


def forward(params: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    h = relu_fwd(linear_fwd(x, params["w1"], params["b1"]))
    return linear_fwd(h, params["w2"], params["b2"])


def loss_and_grads(
    params: dict[str, torch.Tensor], x: torch.Tensor, y: torch.Tensor
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    z1 = linear_fwd(x, params["w1"], params["b1"])
    h = relu_fwd(z1)
    pred = linear_fwd(h, params["w2"], params["b2"])
    loss = mse_fwd(pred, y)

    d_pred = mse_bwd(pred, y)
    d_h, d_w2, d_b2 = linear_bwd(d_pred, h, params["w2"])
    d_z1 = relu_bwd(d_h, z1)
    _, d_w1, d_b1 = linear_bwd(d_z1, x, params["w1"])
    return loss, {"w1": d_w1, "b1": d_b1, "w2": d_w2, "b2": d_b2}


def sgd_step(
    params: dict[str, torch.Tensor], grads: dict[str, torch.Tensor], lr: float
) -> dict[str, torch.Tensor]:
    new_params = {}
    for name in params:
        new_params[name] = params[name] - lr * grads[name]
    return new_params


if __name__ == "__main__":
    params = {"w1": torch.tensor([[1.0], [-1.0]]), "b1": torch.zeros(2),
              "w2": torch.tensor([[1.0, 1.0]]), "b2": torch.zeros(1)}
    x, y = torch.tensor([[2.0]]), torch.tensor([[1.0]])
    print(forward(params, x))
    loss, grads = loss_and_grads(params, x, y)
    print(loss, grads["w1"], grads["w2"])
    print(sgd_step(params, grads, lr=0.1)["w2"])
    print(params["w2"])  # unchanged
