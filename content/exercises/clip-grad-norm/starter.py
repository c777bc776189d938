import torch


def clip_grad_norm_(
    parameters: list[torch.Tensor], max_norm: float, norm_type: float = 2.0
) -> torch.Tensor:
    """parameters: tensors of any shapes, each with a .grad (same shape) or None.

    Scales every .grad in place so that their global norm is at most max_norm; returns the
    global norm before clipping as a 0-d tensor.
    """
    raise NotImplementedError
