# Bug: A merge is a str.replace of "left right" on the space-joined symbols, which ignores symbol boundaries: merging ("a", "b") also glues "ca b" into "cab" (and "a bc" into "abc"), so symbols that end with left or start with right are merged too.
def _merge_pair(symbols, pair):
    # Left to right, non-overlapping: after a merge the scan resumes past both symbols,
    # so ["a", "a", "a"] with ("a", "a") gives ["aa", "a"], never ["a", "aa"].
    left, right = pair
    return " ".join(symbols).replace(left + " " + right, left + right).split(" ")


def train_bpe(word_counts, num_merges, min_count=2):
    # Every distinct word is kept once, as its current list of symbols, with its count.
    words = [(list(word), count) for word, count in word_counts.items()]
    merges = []
    for _ in range(num_merges):
        # Every adjacent position counts, overlapping ones too ("aaa" holds ("a", "a") twice),
        # weighted by how often the word occurs in the corpus.
        pair_counts = {}
        for symbols, count in words:
            for pair in zip(symbols, symbols[1:]):
                pair_counts[pair] = pair_counts.get(pair, 0) + count
        if not pair_counts:
            break
        # Highest count first; among equal counts the smallest pair, as Python orders tuples.
        best = min(pair_counts, key=lambda pair: (-pair_counts[pair], pair))
        if pair_counts[best] < min_count:
            break
        merges.append(best)
        words = [(_merge_pair(symbols, best), count) for symbols, count in words]
    return merges


def encode(word, merges):
    # The rank of a pair is its first position in the list of merges.
    ranks = {}
    for rank, pair in enumerate(merges):
        ranks.setdefault(tuple(pair), rank)
    symbols = list(word)
    while len(symbols) > 1:
        present = [pair for pair in zip(symbols, symbols[1:]) if pair in ranks]
        if not present:
            break
        # The earliest-learned merge that applies goes first, everywhere in the word.
        symbols = _merge_pair(symbols, min(present, key=ranks.__getitem__))
    return symbols
