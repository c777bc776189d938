# Bug: The mask is made with .float() and the scale applied to it, so a float16/bfloat16 input comes back as float32 (and float64 is computed through a float32 mask); a correct version keeps x's dtype.
import torch


def dropout(x, p, training=True, generator=None):
    if not training or p == 0.0:
        # Inverted dropout scaled at training time, so eval is the identity.
        return x.clone()
    if p >= 1.0:
        # Everything dropped; 1 / (1 - p) would be a division by zero.
        return torch.zeros_like(x)
    keep = torch.rand(x.shape, generator=generator, device=x.device) >= p
    # Kept with probability 1 - p and scaled by its inverse: E[output] = x.
    return x * (keep.float() / (1.0 - p))
