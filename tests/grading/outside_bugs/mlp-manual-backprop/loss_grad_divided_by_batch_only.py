# Bug: The gradient of the mean squared error divides by N, the batch size, instead of N * O, the number of elements the mean runs over, so gradients are O times too large when O > 1.
import torch


def _layers(params, x):
    pre = x @ params["w1"].T + params["b1"]
    h = torch.clamp(pre, min=0)
    return pre, h, h @ params["w2"].T + params["b2"]


def forward(params, x):
    return _layers(params, x)[2]


def loss_and_grads(params, x, y):
    pre, h, pred = _layers(params, x)
    diff = pred - y
    loss = (diff * diff).mean()
    # d mean(diff^2) / d pred = 2 diff / (number of elements): the mean runs over N * O.
    g_pred = 2.0 * diff / max(diff.shape[0], 1)
    g_w2 = g_pred.T @ h
    g_b2 = g_pred.sum(dim=0)
    g_h = g_pred @ params["w2"]
    # relu passes the gradient where its input was positive (subgradient 0 at exactly 0).
    g_pre = g_h * (pre > 0).to(g_h.dtype)
    g_w1 = g_pre.T @ x
    g_b1 = g_pre.sum(dim=0)
    return loss, {"w1": g_w1, "b1": g_b1, "w2": g_w2, "b2": g_b2}


def sgd_step(params, grads, lr):
    # New tensors: the caller's parameters are not changed in place.
    return {name: p - lr * grads[name] for name, p in params.items()}
