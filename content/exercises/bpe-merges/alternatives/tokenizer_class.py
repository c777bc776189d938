# Style: a small BPETokenizer class holding the word table, with tuple symbols; functions wrap it; __all__.
__all__ = ["train_bpe", "encode", "BPETokenizer"]


class BPETokenizer:
    def __init__(self, merges=()):
        self.merges = [tuple(m) for m in merges]
        self.rank = {}
        for i, m in enumerate(self.merges):
            if m not in self.rank:
                self.rank[m] = i

    @staticmethod
    def apply(symbols, pair):
        out = []
        i = 0
        n = len(symbols)
        while i < n:
            if i < n - 1 and symbols[i] == pair[0] and symbols[i + 1] == pair[1]:
                out.append(pair[0] + pair[1])
                i += 2
            else:
                out.append(symbols[i])
                i += 1
        return tuple(out)

    def fit(self, word_counts, num_merges, min_count):
        table = [(tuple(w), c) for w, c in word_counts.items()]
        for _ in range(num_merges):
            counts = {}
            for symbols, c in table:
                for j in range(len(symbols) - 1):
                    key = (symbols[j], symbols[j + 1])
                    counts[key] = counts.get(key, 0) + c
            if not counts:
                break
            ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            pair, total = ordered[0]
            if total < min_count:
                break
            self.merges.append(pair)
            self.rank.setdefault(pair, len(self.merges) - 1)
            table = [(self.apply(s, pair), c) for s, c in table]
        return self

    def tokenize(self, word):
        symbols = tuple(word)
        while True:
            ranked = [(self.rank[p], p) for p in zip(symbols, symbols[1:]) if p in self.rank]
            if not ranked:
                return list(symbols)
            symbols = self.apply(symbols, min(ranked)[1])


def train_bpe(word_counts, num_merges, min_count=2):
    return BPETokenizer().fit(word_counts, num_merges, min_count).merges


def encode(word, merges):
    return BPETokenizer(merges).tokenize(word)
