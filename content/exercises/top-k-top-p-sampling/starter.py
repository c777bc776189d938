import torch


def filter_logits(
    logits: torch.Tensor, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0
) -> torch.Tensor:
    """logits (B, V) float32/float64 -> probabilities (B, V), same dtype: softmax of
    logits / temperature restricted to the top_k tokens (0: all), then to the nucleus of
    mass top_p, renormalised; temperature 0 is a one-hot on the argmax."""
    raise NotImplementedError


def sample(probs: torch.Tensor, uniforms: torch.Tensor) -> torch.Tensor:
    """probs (B, V), uniforms (B,) in [0, 1) -> (B,) int64: for each row the first token whose
    cumulative probability exceeds its uniform."""
    raise NotImplementedError
