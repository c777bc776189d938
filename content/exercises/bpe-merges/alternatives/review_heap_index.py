# Style: a lazy max-heap of (-count, left, right) with an index from each pair to the words holding it, words as lists of symbols; encode scans positions for the lowest rank.
import heapq
from collections import defaultdict


def _merge_symbols(symbols, left, right):
    """One left-to-right pass over a list of symbols; returns a new list."""
    out = []
    i = 0
    n = len(symbols)
    while i < n:
        if i + 1 < n and symbols[i] == left and symbols[i + 1] == right:
            out.append(left + right)
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


def train_bpe(
    word_counts: dict[str, int], num_merges: int, min_count: int = 2
) -> list[tuple[str, str]]:
    """word_counts: each distinct word of the corpus (a non-empty str) and how often it occurs.

    Returns the learned merges in order, each a (left, right) tuple of two symbols; at most
    num_merges of them.
    """
    # Parallel lists: words[k] is a list of symbols, freqs[k] its count.
    words = [list(w) for w in word_counts]
    freqs = list(word_counts.values())

    totals = defaultdict(int)         # pair -> weighted count
    where = defaultdict(set)          # pair -> indices of words that hold it

    def add_word(k, sign):
        syms = words[k]
        f = freqs[k] * sign
        for j in range(len(syms) - 1):
            p = (syms[j], syms[j + 1])
            totals[p] += f
            if sign > 0:
                where[p].add(k)
            if totals[p] == 0:
                del totals[p]

    for k in range(len(words)):
        add_word(k, +1)

    # Max-heap by total, ties to the smallest pair: entries (-total, left, right).
    heap = [(-t, p[0], p[1]) for p, t in totals.items()]
    heapq.heapify(heap)

    merges = []
    while len(merges) < num_merges:
        best = None
        while heap:
            neg, a, b = heap[0]
            if totals.get((a, b), 0) == -neg:
                best = (a, b)
                break
            heapq.heappop(heap)  # stale entry
        if best is None:
            break  # no adjacent pair left anywhere
        if totals[best] < min_count:
            break
        heapq.heappop(heap)
        merges.append(best)
        touched = set()
        for k in list(where.pop(best, ())):
            syms = words[k]
            # The word may no longer hold the pair (index entries are never pruned).
            if not any(syms[j] == best[0] and syms[j + 1] == best[1]
                       for j in range(len(syms) - 1)):
                continue
            # Pairs that lose count must be pushed again too, at their new total.
            for j in range(len(syms) - 1):
                touched.add((syms[j], syms[j + 1]))
            add_word(k, -1)
            words[k] = _merge_symbols(syms, best[0], best[1])
            add_word(k, +1)
            syms = words[k]
            for j in range(len(syms) - 1):
                touched.add((syms[j], syms[j + 1]))
        totals.pop(best, None)
        for p in touched:
            t = totals.get(p, 0)
            if t > 0:
                heapq.heappush(heap, (-t, p[0], p[1]))
    return merges


def encode(word: str, merges: list[tuple[str, str]]) -> list[str]:
    """Splits `word` into symbols by applying `merges` (as train_bpe returns them) by rank.

    Returns the list of symbols; their concatenation is `word`.
    """
    rank = {}
    for r, p in enumerate(merges):
        p = (p[0], p[1])
        if p not in rank:
            rank[p] = r
    symbols = list(word)
    while len(symbols) > 1:
        best_rank = None
        best_pair = None
        for j in range(len(symbols) - 1):
            r = rank.get((symbols[j], symbols[j + 1]))
            if r is not None and (best_rank is None or r < best_rank):
                best_rank = r
                best_pair = (symbols[j], symbols[j + 1])
        if best_pair is None:
            break
        symbols = _merge_symbols(symbols, best_pair[0], best_pair[1])
    return symbols


if __name__ == "__main__":
    merges = train_bpe({"tensor": 4, "tense": 3, "ten": 6, "net": 2}, 10)
    print(merges)
    print(encode("tenet", merges), encode("sentence", merges))
    print(train_bpe({"aaaa": 1}, 5, min_count=1))
    print(encode("aaaaa", [("a", "a")]))
