# Style: hypotheses as one token tensor reordered by parent, a small class for the finished
"""Hypotheses as one (beams, t) token tensor, reordered by the chosen parents each step, the
way a transformer decoder reorders its batch and KV cache."""

import torch


class Finished:
    def __init__(self):
        self.best = None  # (normalised score, tokens)

    def add(self, tokens, raw, alpha):
        score = raw / len(tokens) ** alpha
        if self.best is None or score > self.best[0]:
            self.best = (score, tokens)


def beam_search(log_probs_first, log_probs_next, beam_size, max_len, eos_id, alpha=0.0):
    if log_probs_first.dim() != 1:
        raise ValueError("log_probs_first must be (V,)")
    v = log_probs_first.numel()
    if log_probs_next.shape != (v, v):
        raise ValueError("log_probs_next must be (V, V)")
    if not (beam_size >= 1 and max_len >= 1 and 0 <= eos_id < v and alpha >= 0):
        raise ValueError("invalid search settings")
    first = log_probs_first.double()
    table = log_probs_next.double()
    tokens = torch.empty(1, 0, dtype=torch.long)
    scores = torch.zeros(1, dtype=torch.float64)
    done = Finished()
    for t in range(1, max_len + 1):
        step = first.expand(tokens.shape[0], v) if t == 1 else table[tokens[:, -1]]
        cand = (scores.unsqueeze(1) + step).reshape(-1)
        order = torch.argsort(-cand, stable=True)[:beam_size]
        parents, new = order // v, order % v
        tokens = torch.cat([tokens[parents], new.unsqueeze(1)], dim=1)
        scores = cand[order]
        ends = (new == eos_id) | (t == max_len)
        for row in ends.nonzero().flatten().tolist():
            done.add(tokens[row].tolist(), scores[row].item(), alpha)
        tokens, scores = tokens[~ends], scores[~ends]
        if tokens.shape[0] == 0:
            break
    return done.best[1], done.best[0]
