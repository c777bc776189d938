# Style: words kept as strings of symbols joined by a separator, merges as regular-expression substitutions; Counter and sorted for the tie.
import re
from collections import Counter


def _separator(*texts):
    # A word may hold any character, spaces included: join symbols by one that none holds.
    used = set("".join(texts))
    return next(chr(c) for c in range(1, 0x110000) if chr(c) not in used)


def _sub(pair, spelled, sep):
    edge = "[^" + re.escape(sep) + "]"
    pattern = "(?<!" + edge + ")" + re.escape(pair[0] + sep + pair[1]) + "(?!" + edge + ")"
    return re.sub(pattern, lambda _: pair[0] + pair[1], spelled)


def train_bpe(word_counts, num_merges, min_count=2):
    sep = _separator(*word_counts)
    corpus = {sep.join(w): n for w, n in word_counts.items()}
    merges = []
    while len(merges) < num_merges:
        stats = Counter()
        for spelled, n in corpus.items():
            parts = spelled.split(sep)
            for left, right in zip(parts, parts[1:]):
                stats[left, right] += n
        if not stats:
            break
        best_count = max(stats.values())
        if best_count < min_count:
            break
        pair = sorted(p for p, n in stats.items() if n == best_count)[0]
        merges.append(pair)
        corpus = {_sub(pair, s, sep): n for s, n in corpus.items()}
    return merges


def encode(word, merges):
    if not word:
        return []
    sep = _separator(word, *(a + b for a, b in merges))
    spelled = sep.join(word)
    rank = {}
    for i, pair in enumerate(merges):
        rank.setdefault((pair[0], pair[1]), i)
    while True:
        parts = spelled.split(sep)
        candidates = {(a, b) for a, b in zip(parts, parts[1:]) if (a, b) in rank}
        if not candidates:
            return parts
        spelled = _sub(min(candidates, key=lambda p: rank[p]), spelled, sep)
