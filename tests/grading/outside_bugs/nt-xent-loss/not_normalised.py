# Bug: The embeddings are not L2-normalised, so z @ z.T holds raw dot products instead of cosine similarities and the loss depends on the rows' lengths.
import torch
import torch.nn.functional as F


def nt_xent(z1: torch.Tensor, z2: torch.Tensor, temperature: float = 0.5) -> torch.Tensor:
    n = z1.shape[0]
    # Both views in one (2N, d) batch, each row on the unit sphere: z @ z.T is then the
    # matrix of cosine similarities.
    z = torch.cat([z1, z2], dim=0)
    logits = z @ z.T / temperature
    # A sample is never its own candidate: -inf on the diagonal removes it from the softmax.
    self_mask = torch.eye(2 * n, dtype=torch.bool, device=z.device)
    logits = logits.masked_fill(self_mask, float("-inf"))
    # The positive of row i is the other view of the same sample: i + N for the first half,
    # i - N for the second.
    idx = torch.arange(2 * n, device=z.device)
    positive = (idx + n) % (2 * n)
    # Cross-entropy of each row against its positive, averaged over all 2N anchors;
    # logsumexp subtracts the row maximum, so a small temperature cannot overflow.
    log_denominator = torch.logsumexp(logits, dim=1)
    return (log_denominator - logits[idx, positive]).mean()
