# Style: the (2N, 2N) matrix kept as its four N x N blocks (z1z1, z1z2, z2z1, z2z2); the
# positives are the diagonal of the cross blocks; log_softmax by hand with the row maximum.
import torch


def _unit(v: torch.Tensor) -> torch.Tensor:
    return v / v.norm(dim=1, keepdim=True).clamp_min(1e-12)


def _anchor_losses(same: torch.Tensor, cross: torch.Tensor) -> torch.Tensor:
    """Rows of one view: `same` against its own view (diagonal excluded), `cross` against
    the other view (its diagonal is the positive)."""
    eye = torch.eye(same.shape[0], dtype=torch.bool, device=same.device)
    same = same.masked_fill(eye, float("-inf"))
    rows = torch.cat([same, cross], dim=1)
    top = rows.max(dim=1, keepdim=True).values
    log_den = top.squeeze(1) + torch.log(torch.exp(rows - top).sum(dim=1))
    return log_den - cross.diagonal()


def nt_xent(z1, z2, temperature=0.5):
    a, b = _unit(z1), _unit(z2)
    s_aa = a @ a.T / temperature
    s_bb = b @ b.T / temperature
    s_ab = a @ b.T / temperature
    losses = torch.cat([_anchor_losses(s_aa, s_ab), _anchor_losses(s_bb, s_ab.T)])
    return losses.mean()
