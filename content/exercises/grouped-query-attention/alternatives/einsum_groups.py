# Style: einsum over an unflattened group axis, __all__ and a __main__ self-test
__all__ = ["grouped_query_attention"]

import torch


def grouped_query_attention(q, k, v, causal=False):
    hq, t, d = q.shape[1:]
    hkv, s = k.shape[1], k.shape[2]
    qq = q.unflatten(1, (hkv, hq // hkv))  # (B, Hkv, G, T, D)
    scores = torch.einsum("bhgtd,bhsd->bhgts", qq, k) * d**-0.5
    if causal:
        future = torch.triu(torch.ones(t, s, dtype=torch.bool), diagonal=s - t + 1)
        scores = scores.masked_fill(future, float("-inf"))
    probs = torch.nn.functional.softmax(scores, dim=-1)
    out = torch.einsum("bhgts,bhsd->bhgtd", probs, v)
    return out.flatten(1, 2)


if __name__ == "__main__":
    q = torch.tensor([[[[1.0, 0.0]], [[0.0, 1.0]]]])
    k = torch.tensor([[[[1.0, 0.0], [0.0, 1.0]]]])
    print(grouped_query_attention(q, k, k.clone()))
