# Style: finished list sorted by (score, arrival), stacked rows per step
import math

import torch

__all__ = ["beam_search"]


def _check(first, nxt, beam_size, max_len, eos_id, alpha):
    v = first.shape[0]
    ok = first.ndim == 1 and nxt.ndim == 2 and nxt.shape[0] == v and nxt.shape[1] == v
    if not ok:
        raise ValueError("shape mismatch")
    for name, value, low in (
        ("beam_size", beam_size, 1),
        ("max_len", max_len, 1),
        ("eos_id", eos_id, 0),
    ):
        if value < low:
            raise ValueError(f"{name} too small")
    if eos_id >= v or alpha < 0 or math.isnan(alpha):
        raise ValueError("eos_id out of range or alpha negative")


def beam_search(log_probs_first, log_probs_next, beam_size, max_len, eos_id, alpha=0.0):
    _check(log_probs_first, log_probs_next, beam_size, max_len, eos_id, alpha)
    v = log_probs_first.shape[0]
    first = log_probs_first.to(torch.float64)
    nxt = log_probs_next.to(torch.float64)
    alive = [([], 0.0)]
    finished = []  # (normalised score, order of arrival, tokens)
    for length in range(1, max_len + 1):
        rows = torch.stack([first if not seq else nxt[seq[-1]] for seq, _ in alive])
        base = torch.tensor([s for _, s in alive], dtype=torch.float64)
        flat = (base[:, None] + rows).flatten()
        keep = torch.sort(flat, descending=True, stable=True).indices[:beam_size].tolist()
        survivors = []
        for i in keep:
            seq = alive[i // v][0] + [i % v]
            raw = flat[i].item()
            if seq[-1] == eos_id or length == max_len:
                finished.append((raw / length**alpha, len(finished), seq))
            else:
                survivors.append((seq, raw))
        alive = survivors
        if not alive:
            break
    # Highest score first; the arrival order settles ties.
    score, _, seq = sorted(finished, key=lambda f: (-f[0], f[1]))[0]
    return seq, score


if __name__ == "__main__":
    first = torch.tensor([0.4, 0.25, 0.35]).log()
    nxt = torch.tensor([[0.5, 0.4, 0.1], [0.2, 0.1, 0.7], [0.4, 0.1, 0.5]]).log()
    print(beam_search(first, nxt, 2, 4, 2, alpha=1.0))
