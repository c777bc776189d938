# Style: a Python loop over the batch with 2-D matmuls, float64 inside, cast back; self-test block.
import torch


def _row_softmax_or_zero(s: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """Softmax of each row of s over the entries where keep is True; rows with none -> zeros."""
    s = s.masked_fill(~keep, float("-inf"))
    m = s.max(dim=1, keepdim=True).values
    m = torch.nan_to_num(m, neginf=0.0)  # an all-masked row: shift by 0, every exp is 0 anyway
    e = torch.exp(s - m)
    z = e.sum(dim=1, keepdim=True)
    return e / z.clamp_min(torch.finfo(s.dtype).tiny)


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    key_padding_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    n_q, n_k, d = q.shape[1], k.shape[1], q.shape[2]
    keep_base = torch.ones(n_q, n_k, dtype=torch.bool, device=q.device)
    if causal:
        # query i is position i + (n_k - n_q) of the sequence: keep the lower triangle
        keep_base = torch.tril(keep_base, diagonal=n_k - n_q)
    outs = []
    for b in range(q.shape[0]):
        qb, kb, vb = q[b].double(), k[b].double(), v[b].double()
        keep = keep_base
        if key_padding_mask is not None:
            keep = keep & ~key_padding_mask[b].bool()[None, :]
        w = _row_softmax_or_zero(qb @ kb.T / d**0.5, keep)
        outs.append(w @ vb)
    return torch.stack(outs).to(v.dtype) if outs else q.new_zeros(0, n_q, v.shape[2])


if __name__ == "__main__":
    q = torch.tensor([[[1.0, 0.0], [0.0, 1.0]]])
    k = q.clone()
    v = torch.tensor([[[1.0], [3.0]]])
    print(attention(q, k, v, causal=True))  # [[1.0000], [2.3395]]
    pad = torch.tensor([[True, True]])
    print(attention(q, k, v, key_padding_mask=pad))  # zeros: every key is padding
    big = torch.tensor([[[1e4, 0.0], [0.0, 1e4]]])
    print(attention(big, big, v))  # finite
