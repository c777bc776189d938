import torch


def clip_rows(x: torch.Tensor, max_norm: float) -> tuple[torch.Tensor, torch.Tensor]:
    """x (N, D). Returns (x with every row of L2 norm > max_norm scaled to norm max_norm,
    the number of such rows as a 0-dim int64 tensor), without a graph break."""
    rows, clipped = [], 0
    for row in x:
        norm = row.norm().item()
        if norm > max_norm:
            row = row * (max_norm / norm)
            clipped += 1
        rows.append(row)
    print(f"clipped {clipped} of {len(rows)} rows")
    return torch.stack(rows), clipped
