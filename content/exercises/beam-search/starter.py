import torch


def beam_search(
    log_probs_first: torch.Tensor,
    log_probs_next: torch.Tensor,
    beam_size: int,
    max_len: int,
    eos_id: int,
    alpha: float = 0.0,
) -> tuple[list[int], float]:
    """log_probs_first (V,): log p(y_1 = v); log_probs_next (V, V): row u, column v is
    log p(y_t = v | y_{t-1} = u). Returns the best finished hypothesis as (tokens, score):
    tokens a list of ints (ending with eos_id unless it was cut at max_len), score its summed
    log-probability divided by len(tokens) ** alpha."""
    raise NotImplementedError
