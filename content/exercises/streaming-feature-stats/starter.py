import torch

Stats = tuple[int, torch.Tensor, torch.Tensor]  # (count, mean (F,), M2 (F,)), float64


def chunk_stats(x: torch.Tensor) -> Stats:
    """Statistics of one chunk x (n, F), n >= 0, float32 or float64.

    Returns (n, mean, M2): n a Python int, mean (F,) float64, M2 (F,) float64, the sum over
    rows of (x - mean)^2. An empty chunk gives (0, zeros, zeros).
    """
    raise NotImplementedError


def merge(a: Stats, b: Stats) -> Stats:
    """The statistics of the union of the rows behind a and b (either count may be 0)."""
    raise NotImplementedError


def stream_stats(
    chunks: list[torch.Tensor], unbiased: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-feature mean and standard deviation over all rows of all chunks, each (n_i, F).

    Returns (mean, std), both (F,) float64. std divides by N (or N - 1 when unbiased).
    """
    raise NotImplementedError
