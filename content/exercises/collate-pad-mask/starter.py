import torch


def collate(
    batch: list[tuple[torch.Tensor, int]], pad_value: float = 0, batch_first: bool = True
) -> dict[str, torch.Tensor]:
    """batch: B pairs (sequence (L_i,) or (L_i, F), label). Returns inputs (B, T, ...) or
    (T, B, ...), lengths (B,) int64, mask (B, T) or (T, B) bool, labels (B,) int64."""
    raise NotImplementedError
