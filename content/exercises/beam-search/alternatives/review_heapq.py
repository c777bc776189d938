# Style: plain Python lists and floats, the candidates pruned with heapq.nsmallest on (-score, parent rank, token), written from the statement alone by a reviewer.
import heapq

import torch


def beam_search(log_probs_first, log_probs_next, beam_size, max_len, eos_id, alpha=0.0):
    if log_probs_first.dim() != 1:
        raise ValueError("log_probs_first must be (V,)")
    vocab = log_probs_first.shape[0]
    if tuple(log_probs_next.shape) != (vocab, vocab):
        raise ValueError("log_probs_next must be (V, V)")
    if beam_size < 1 or max_len < 1 or not (0 <= eos_id < vocab) or alpha < 0:
        raise ValueError("bad settings")
    first = log_probs_first.double().tolist()
    nxt = log_probs_next.double().tolist()

    alive = [((), 0.0)]  # (tokens, raw score), in rank order
    finished = []
    for t in range(1, max_len + 1):
        cands = []
        for rank, (toks, raw) in enumerate(alive):
            row = first if not toks else nxt[toks[-1]]
            for tok in range(vocab):
                cands.append((raw + row[tok], rank, tok))
        # best raw score first; ties: parent rank, then token id
        kept = heapq.nsmallest(beam_size, cands, key=lambda c: (-c[0], c[1], c[2]))
        new_alive = []
        for raw, rank, tok in kept:
            hyp = (alive[rank][0] + (tok,), raw)
            if tok == eos_id or t == max_len:
                finished.append(hyp)
            else:
                new_alive.append(hyp)
        alive = new_alive
        if not alive:
            break

    best_toks, best_score = None, None
    for toks, raw in finished:
        score = raw / len(toks) ** alpha
        if best_score is None or score > best_score:
            best_toks, best_score = toks, score
    return list(best_toks), float(best_score)


if __name__ == "__main__":
    first = torch.tensor([0.4, 0.25, 0.35]).log()
    nxt = torch.tensor([[0.5, 0.4, 0.1], [0.2, 0.1, 0.7], [0.4, 0.1, 0.5]]).log()
    print(beam_search(first, nxt, beam_size=1, max_len=4, eos_id=2))
    print(beam_search(first, nxt, beam_size=2, max_len=4, eos_id=2))
    print(beam_search(first, nxt, beam_size=2, max_len=4, eos_id=2, alpha=1.0))
