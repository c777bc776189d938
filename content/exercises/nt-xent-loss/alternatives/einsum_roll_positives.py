# Style: einsum for the similarities, torch.where for the mask, and the positives computed
# directly as row-wise dot products with the batch rolled by N.
import torch


def nt_xent(z1: torch.Tensor, z2: torch.Tensor, temperature: float = 0.5) -> torch.Tensor:
    z = torch.cat([z1, z2])
    z = z / torch.linalg.vector_norm(z, dim=1, keepdim=True)
    n2 = z.shape[0]
    logits = torch.einsum("id,jd->ij", z, z) / temperature
    diagonal = torch.eye(n2, dtype=torch.bool, device=z.device)
    logits = torch.where(diagonal, torch.full_like(logits, float("-inf")), logits)
    # Row i's positive is z[(i + N) % 2N]: rolling z by N lines it up with z.
    positive_logits = (z * torch.roll(z, shifts=n2 // 2, dims=0)).sum(dim=1) / temperature
    return (torch.logsumexp(logits, dim=1) - positive_logits).mean()
