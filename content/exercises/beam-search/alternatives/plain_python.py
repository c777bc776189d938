# Style: plain Python lists, tuples and sorted()
"""Lists and sorted() only: the tables become nested Python floats (float64) once."""


def beam_search(log_probs_first, log_probs_next, beam_size, max_len, eos_id, alpha=0.0):
    first = [float(x) for x in log_probs_first.tolist()] if log_probs_first.dim() == 1 else None
    vocab = len(first) if first is not None else -1
    if first is None or list(log_probs_next.shape) != [vocab, vocab]:
        raise ValueError("shapes must be (V,) and (V, V)")
    if beam_size < 1 or max_len < 1 or eos_id < 0 or eos_id >= vocab or alpha < 0:
        raise ValueError("bad beam_size, max_len, eos_id or alpha")
    table = log_probs_next.double().tolist()

    alive = [((), 0.0)]
    finished = []
    for step in range(1, max_len + 1):
        candidates = []
        for rank, (prefix, score) in enumerate(alive):
            row = first if step == 1 else table[prefix[-1]]
            for token, lp in enumerate(row):
                candidates.append((-(score + lp), rank, token, (*prefix, token)))
        candidates.sort(key=lambda c: c[:3])
        alive = []
        for neg, _, token, seq in candidates[:beam_size]:
            if token == eos_id or step == max_len:
                finished.append(((-neg) / step**alpha, seq))
            else:
                alive.append((seq, -neg))
        if not alive:
            break
    # max() returns the first maximal element: the earliest finished wins a tie.
    score, seq = max(finished, key=lambda f: f[0])
    return list(seq), score
