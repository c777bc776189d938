# Bug: Candidates that end with eos are set aside but do not use up beam slots: the alive list is refilled from the next-best candidates until it holds beam_size hypotheses, so the search keeps more alive hypotheses than the statement's beam and can find a different best.
import torch


def beam_search(log_probs_first, log_probs_next, beam_size, max_len, eos_id, alpha=0.0):
    vocab = log_probs_first.shape[0]
    if log_probs_first.dim() != 1 or tuple(log_probs_next.shape) != (vocab, vocab):
        raise ValueError("expected log_probs_first (V,) and log_probs_next (V, V)")
    if beam_size < 1 or max_len < 1 or not 0 <= eos_id < vocab or alpha < 0:
        raise ValueError("need beam_size >= 1, max_len >= 1, 0 <= eos_id < V, alpha >= 0")
    # float64 throughout: scores are sums of many log-probabilities, and ties must be ties.
    first = log_probs_first.detach().to(torch.float64)
    table = log_probs_next.detach().to(torch.float64)

    beams = [[]]  # the alive hypotheses, in rank order
    scores = torch.zeros(1, dtype=torch.float64)  # their raw summed log-probabilities
    finished = []  # (normalised score, tokens), in the order they finished
    for length in range(1, max_len + 1):
        if length == 1:
            candidates = scores[:, None] + first[None, :]
        else:
            last = torch.tensor([seq[-1] for seq in beams])
            candidates = scores[:, None] + table[last]  # (beams, V): row = parent
        flat = candidates.flatten()  # index = parent * V + token
        # Raw score descending; the stable sort breaks ties by parent rank, then token id.
        chosen = torch.sort(flat, descending=True, stable=True).indices
        next_beams, next_scores = [], []
        for position, index in enumerate(chosen.tolist()):
            if len(next_beams) == beam_size:
                break
            parent, token = divmod(index, vocab)
            if (token == eos_id or length == max_len) and position >= beam_size:
                continue
            seq, score = beams[parent] + [token], flat[index].item()
            if token == eos_id or length == max_len:
                # Set aside for good: it takes its slot in this step's beam and is not
                # extended. The length counts the eos token.
                finished.append((score / length**alpha, seq))
            else:
                next_beams.append(seq)
                next_scores.append(score)
        if not next_beams:
            break
        beams, scores = next_beams, torch.tensor(next_scores, dtype=torch.float64)

    best_score, best_seq = finished[0]
    for score, seq in finished[1:]:
        if score > best_score:  # strictly: on a tie the earlier finished hypothesis stays
            best_score, best_seq = score, seq
    return best_seq, best_score
