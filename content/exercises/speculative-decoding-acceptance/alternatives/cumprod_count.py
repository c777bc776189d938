# Style: vectorised - cumprod of the accept flags counts the prefix, a count replaces searchsorted
import torch

__all__ = ["speculative_step"]


def speculative_step(draft_probs, target_probs, draft_tokens, uniforms):
    k = draft_tokens.numel()
    shapes_ok = (
        draft_probs.dim() == 2
        and draft_probs.shape[0] == k
        and target_probs.shape == (k + 1, draft_probs.shape[1])
        and uniforms.shape == (k + 1,)
    )
    if not shapes_ok:
        raise ValueError("inconsistent shapes")
    idx = torch.arange(k)
    accept = uniforms[:k] * draft_probs[idx, draft_tokens] < target_probs[idx, draft_tokens]
    # 1 while every token so far was accepted, 0 from the first rejection on.
    n = int(accept.long().cumprod(0).sum())
    if n == k:
        w = target_probs[k]
    else:
        w = torch.relu(target_probs[n] - draft_probs[n])
        if float(w.max()) <= 0:
            w = target_probs[n]
    cum = torch.cumsum(w, 0)
    j = int((cum <= uniforms[k] * cum[-1]).sum())  # how many cumulative sums are <= u * S
    last = int(torch.arange(w.numel())[w > 0].max())
    return torch.cat([draft_tokens[:n], torch.tensor([min(j, last)], dtype=torch.int64)])
