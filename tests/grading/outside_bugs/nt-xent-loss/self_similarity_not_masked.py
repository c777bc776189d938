# Bug: The anchor's similarity with itself is left in the denominator (no mask on the diagonal), so every row's softmax includes the largest logit 1/tau and the loss is too large.
import torch
import torch.nn.functional as F


def nt_xent(z1: torch.Tensor, z2: torch.Tensor, temperature: float = 0.5) -> torch.Tensor:
    n = z1.shape[0]
    # Both views in one (2N, d) batch, each row on the unit sphere: z @ z.T is then the
    # matrix of cosine similarities.
    z = F.normalize(torch.cat([z1, z2], dim=0), dim=1)
    logits = z @ z.T / temperature
    # The positive of row i is the other view of the same sample: i + N for the first half,
    # i - N for the second.
    idx = torch.arange(2 * n, device=z.device)
    positive = (idx + n) % (2 * n)
    # Cross-entropy of each row against its positive, averaged over all 2N anchors;
    # logsumexp subtracts the row maximum, so a small temperature cannot overflow.
    log_denominator = torch.logsumexp(logits, dim=1)
    return (log_denominator - logits[idx, positive]).mean()
