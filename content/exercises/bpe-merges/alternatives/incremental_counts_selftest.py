# Style: pair counts updated incrementally (only the words holding the merged pair are recounted); encode scans positions for the lowest rank; a __main__ self-test.
from collections import defaultdict


def _pairs(symbols):
    counts = defaultdict(int)
    for a, b in zip(symbols, symbols[1:]):
        counts[a, b] += 1
    return counts


def _merge(symbols, a, b):
    out, i = [], 0
    while i < len(symbols):
        if symbols[i] == a and i + 1 < len(symbols) and symbols[i + 1] == b:
            out.append(a + b)
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


def train_bpe(word_counts, num_merges, min_count=2):
    words = [list(w) for w in word_counts]
    freq = list(word_counts.values())
    stats = defaultdict(int)
    where = defaultdict(set)
    for idx, symbols in enumerate(words):
        for pair, n in _pairs(symbols).items():
            stats[pair] += n * freq[idx]
            where[pair].add(idx)
    merges = []
    for _ in range(num_merges):
        live = [(n, p) for p, n in stats.items() if n > 0]
        if not live:
            break
        top = max(n for n, _ in live)
        if top < min_count:
            break
        best = min(p for n, p in live if n == top)
        merges.append(best)
        for idx in sorted(where[best]):
            old = words[idx]
            new = _merge(old, *best)
            if new == old:
                continue
            for pair, n in _pairs(old).items():
                stats[pair] -= n * freq[idx]
            for pair, n in _pairs(new).items():
                stats[pair] += n * freq[idx]
                where[pair].add(idx)
            words[idx] = new
    return merges


def encode(word, merges):
    rank = {}
    for r in range(len(merges) - 1, -1, -1):
        rank[tuple(merges[r])] = r
    symbols = list(word)
    while True:
        best = None
        for i in range(len(symbols) - 1):
            r = rank.get((symbols[i], symbols[i + 1]))
            if r is not None and (best is None or r < best):
                best = r
        if best is None:
            return symbols
        symbols = _merge(symbols, *merges[best])


if __name__ == "__main__":
    m = train_bpe({"tensor": 4, "tense": 3, "ten": 6, "net": 2}, 10)
    print(m, encode("tenet", m))
