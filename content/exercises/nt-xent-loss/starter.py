import torch


def nt_xent(z1: torch.Tensor, z2: torch.Tensor, temperature: float = 0.5) -> torch.Tensor:
    """z1, z2: (N, d) embeddings of two augmented views of the same N samples (row i of z1
    and row i of z2 are a positive pair). Returns the 0-d NT-Xent loss in their dtype,
    averaged over all 2N anchors."""
    raise NotImplementedError
