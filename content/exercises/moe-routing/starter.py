import torch


def moe_forward(
    x: torch.Tensor,
    w_router: torch.Tensor,
    experts_w1: torch.Tensor,
    experts_w2: torch.Tensor,
    k: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """x: (N, d) tokens; w_router: (E, d); experts_w1: (E, h, d); experts_w2: (E, d, h);
    1 <= k <= E experts per token.

    Returns (y, aux_loss): y of shape (N, d), the gate-weighted sum of each token's k
    experts' outputs, and the 0-d load-balancing loss.
    """
    raise NotImplementedError
