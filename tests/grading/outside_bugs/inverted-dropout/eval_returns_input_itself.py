# Bug: In eval mode (and for p = 0) the function returns x itself rather than a new tensor, so the output aliases the input and a later in-place change to one changes the other; a correct version returns a copy.
import torch


def dropout(x, p, training=True, generator=None):
    if not training or p == 0.0:
        # Inverted dropout scaled at training time, so eval is the identity.
        return x
    if p >= 1.0:
        # Everything dropped; 1 / (1 - p) would be a division by zero.
        return torch.zeros_like(x)
    keep = torch.rand(x.shape, generator=generator, device=x.device) >= p
    # Kept with probability 1 - p and scaled by its inverse: E[output] = x.
    return x * keep.to(x.dtype) / (1.0 - p)
