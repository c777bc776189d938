# Bug: p = 1 is not special-cased, so kept values are divided by 1 - p = 0 and the output is 0 * inf = NaN everywhere; a correct version returns zeros for p = 1.
import torch


def dropout(x, p, training=True, generator=None):
    if not training or p == 0.0:
        # Inverted dropout scaled at training time, so eval is the identity.
        return x.clone()
    keep = torch.rand(x.shape, generator=generator, device=x.device) >= p
    # Kept with probability 1 - p and scaled by its inverse: E[output] = x.
    return x * keep.to(x.dtype) / (1.0 - p)
