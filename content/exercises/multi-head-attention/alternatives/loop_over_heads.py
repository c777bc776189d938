# Style: an explicit Python loop over heads (each head its own slice of the weights), then concat; self-test.
import torch
import torch.nn.functional as F


def _one_head(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, blocked: torch.Tensor | None
) -> torch.Tensor:
    """q: (B, Lq, hd), k, v: (B, Lk, hd); blocked: bool broadcastable to (B, Lq, Lk)."""
    s = torch.bmm(q, k.transpose(1, 2)) * q.shape[-1] ** -0.5
    if blocked is not None:
        s = s.masked_fill(blocked, float("-inf"))
    return torch.bmm(torch.softmax(s, dim=-1), v)


def multi_head_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    in_proj_weight: torch.Tensor,
    in_proj_bias: torch.Tensor,
    out_proj_weight: torch.Tensor,
    out_proj_bias: torch.Tensor,
    num_heads: int,
    key_padding_mask: torch.Tensor | None = None,
    causal: bool = False,
) -> torch.Tensor:
    E = query.shape[-1]
    hd = E // num_heads
    Lq, Lk = query.shape[1], key.shape[1]

    blocked = None
    if causal:
        i = torch.arange(Lq, device=query.device).unsqueeze(1)
        j = torch.arange(Lk, device=query.device).unsqueeze(0)
        blocked = (j > i).unsqueeze(0)  # (1, Lq, Lk)
    if key_padding_mask is not None:
        pad = key_padding_mask.bool().unsqueeze(1)  # (B, 1, Lk)
        blocked = pad if blocked is None else (blocked | pad)

    heads = []
    for h in range(num_heads):
        rows = slice(h * hd, (h + 1) * hd)
        q = F.linear(query, in_proj_weight[rows], in_proj_bias[rows])
        k = F.linear(key, in_proj_weight[E:][rows], in_proj_bias[E:][rows])
        v = F.linear(value, in_proj_weight[2 * E:][rows], in_proj_bias[2 * E:][rows])
        heads.append(_one_head(q, k, v, blocked))
    return F.linear(torch.cat(heads, dim=-1), out_proj_weight, out_proj_bias)


if __name__ == "__main__":
    torch.manual_seed(0)
    E, H = 4, 2
    w_in, b_in = torch.randn(3 * E, E), torch.randn(3 * E)
    w_out, b_out = torch.randn(E, E), torch.randn(E)
    x = torch.randn(1, 3, E)
    out = multi_head_attention(x, x, x, w_in, b_in, w_out, b_out, H, causal=True)
    print(out)
    # causal: the first position must not change when later positions do
    x2 = x.clone()
    x2[0, 1:] += 1.0
    out2 = multi_head_attention(x2, x2, x2, w_in, b_in, w_out, b_out, H, causal=True)
    print(torch.allclose(out[0, 0], out2[0, 0]))
