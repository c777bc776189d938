import torch


class CachedSelfAttention:
    def __init__(
        self,
        w_q: torch.Tensor,
        w_k: torch.Tensor,
        w_v: torch.Tensor,
        w_o: torch.Tensor,
        num_heads: int,
    ) -> None:
        """w_q, w_k, w_v, w_o: (E, E), applied as x @ w.T. num_heads divides E."""
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Causal self-attention over the whole of x: (batch, L, E) -> (batch, L, E)."""
        raise NotImplementedError

    def step(self, x_new: torch.Tensor) -> torch.Tensor:
        """The next T tokens, (batch, T, E) -> (batch, T, E), attending to the cache and to
        the new tokens up to themselves; their keys and values join the cache."""
        raise NotImplementedError

    def reset(self) -> None:
        """Empty the cache."""
        raise NotImplementedError
