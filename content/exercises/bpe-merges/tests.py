import re
from collections import Counter

import torch

from sandbox.grading import case, edge, fail, nontrivial, performance, prop, values

ALPHABETS = ["ab", "abc", "abcd", "aeiou", "abcdefgh", "xyz_", "a b"]
# The grader's own trainer keeps a word's symbols joined by this character, which no drawn
# word holds (words may hold spaces: the statement allows any character).
SEP = "\x1f"


def vocabulary(d, *, alphabet=None, words=None, longest=9, top=9):
    """A corpus of drawn words over a small alphabet (so pairs repeat), with counts."""
    letters = alphabet if alphabet is not None else d.choice(ALPHABETS)
    n = words if words is not None else d.size(1, 14)
    counts = {}
    for _ in range(n):
        word = "".join(d.choice(letters) for _ in range(d.integer(1, longest)))
        counts[word] = d.integer(1, top)
    return counts


def training(d, *, min_count=None, **kw):
    counts = vocabulary(d, **kw)
    m = min_count if min_count is not None else d.choice([1, 2, 3])
    return case(counts, d.integer(0, 30), min_count=m)


def default_min(d):
    if d.case == 3:
        # Room for every merge, and a pair that occurs once ("QZ"): only the default
        # min_count of 2 stops training before it.
        counts = vocabulary(d)
        counts["QZ"] = 1
        return case(counts, 200)
    return case(vocabulary(d), d.integer(1, 30))


def _merged(spelled, pair):
    """One merge as a regular-expression substitution on SEP-joined symbols
    (non-overlapping, left to right, as re.sub scans)."""
    pattern = f"(?<![^{SEP}])" + re.escape(pair[0] + SEP + pair[1]) + f"(?![^{SEP}])"
    return re.sub(pattern, lambda _: pair[0] + pair[1], spelled)


# A trainer written another way, in the grader: words as SEP-joined strings, each merge a
# regular-expression substitution.
def trusted_train(counts, num_merges, min_count=2):
    words = {SEP.join(w): c for w, c in counts.items()}
    merges = []
    for _ in range(num_merges):
        pairs = Counter()
        for spelled, c in words.items():
            symbols = spelled.split(SEP)
            for i in range(len(symbols) - 1):
                pairs[symbols[i], symbols[i + 1]] += c
        if not pairs:
            break
        top = max(pairs.values())
        best = sorted(p for p, n in pairs.items() if n == top)[0]
        if top < min_count:
            break
        merges.append(best)
        words = {_merged(s, best): c for s, c in words.items()}
    return merges


def trusted(c):
    return trusted_train(c.args[0], c.args[1], c.kwargs.get("min_count", 2))


def trusted_encode(word, merges):
    """Applying every merge once, in order, to the word alone: the same as lowest rank first
    for merges that training produced."""
    spelled = SEP.join(word)
    for pair in merges:
        spelled = _merged(spelled, pair)
    return spelled.split(SEP) if word else []


def encoding(d, *, unseen=False):
    """Merges trained (in the grader) on a drawn corpus, and a word to split: a training word,
    a new word over the same letters, or one with unseen characters."""
    counts = vocabulary(d)
    merges = trusted_train(counts, d.integer(1, 30), 1)
    letters = "".join(sorted(set("".join(counts))))
    kind = d.choice(["seen", "new", "unseen"] if unseen else ["seen", "new"])
    if kind == "seen":
        word = d.choice(sorted(counts))
    else:
        pool = letters + ("QZ " if kind == "unseen" else "")
        word = "".join(d.choice(pool) for _ in range(d.integer(1, 14)))
    return case(word, merges)


def shuffled_merges(d):
    """Merges of a drawn corpus listed in a random order, some twice: ranks decide."""
    counts = vocabulary(d, alphabet=d.choice(["ab", "abc"]))
    merges = trusted_train(counts, d.integer(3, 20), 1)
    order = d.permutation(len(merges))
    listed = [merges[i] for i in order]
    if listed:
        listed.append(listed[d.integer(0, len(listed) - 1)])
    word = "".join(d.choice("abc") for _ in range(d.integer(2, 14)))
    return case(word, listed)


def reversed_merges(d):
    """Merges of a drawn corpus listed in reverse (each before the merges that build its
    symbols), one of them twice, applied to the corpus's longest word: replaying the list
    once, in order, leaves the later merges unapplied; ranks apply them all."""
    counts = vocabulary(d, alphabet=d.choice(["ab", "abc"]))
    listed = trusted_train(counts, d.integer(3, 20), 1)[::-1]
    if listed:
        listed.append(listed[d.integer(0, len(listed) - 1)])
    return case(max(sorted(counts), key=len), listed)


def merges_of(sol, c):
    got = sol.call("train_bpe", *c.args, **c.kwargs)
    if not isinstance(got, (list, tuple)):
        fail(f"train_bpe returned {type(got).__name__}, not a list")
    for pair in got:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            fail(f"train_bpe returned {pair!r}: each merge is a (left, right) pair")
    return [tuple(p) for p in got]


def apply_in_order(word, merges):
    symbols = list(word)
    for a, b in merges:
        out, i = [], 0
        while i < len(symbols):
            if i + 1 < len(symbols) and symbols[i] == a and symbols[i + 1] == b:
                out.append(a + b)
                i += 2
            else:
                out.append(symbols[i])
                i += 1
        symbols = out
    return symbols


def encode_matches_training(sol, c):
    """Encoding a training word with every learned merge gives the word's segmentation at the
    end of training (computed here from the learner's own merges)."""
    counts = c.args[0]
    merges = merges_of(sol, c)
    for word in sorted(counts):
        got = sol.call("encode", word, merges)
        want = apply_in_order(word, merges)
        if list(got) != want:
            fail(f"encode({word!r}, merges) gave {got!r}; training left it as {want!r}")


def order_does_not_matter(sol, c):
    """The same corpus listed in another order learns the same merges."""
    counts = c.args[0]
    first = merges_of(sol, c)
    words = sorted(counts)
    for n, key in enumerate((lambda w: w[::-1], lambda w: (-counts[w], w))):
        reordered = {w: counts[w] for w in sorted(words, key=key)}
        again = merges_of(sol, case(reordered, *c.args[1:], **c.kwargs))
        if again != first:
            fail(f"the corpus in another order (reordering {n + 1}) learned other merges")


def scaled_counts(sol, c):
    """With min_count 1, multiplying every count by 3 changes no choice."""
    counts, num = c.args[0], c.args[1]
    once = merges_of(sol, case(counts, num, min_count=1))
    thrice = merges_of(sol, case({w: 3 * n for w, n in counts.items()}, num, min_count=1))
    if once != thrice:
        fail("tripling every count changed the merges learned with min_count=1")


def encode_concatenates(sol, c):
    word, merges = c.args
    got = sol.call("encode", word, merges)
    if not isinstance(got, list) or not all(isinstance(s, str) and s for s in got):
        fail(f"encode({word!r}, ...) returned {got!r}: expected a list of non-empty strings")
    if "".join(got) != word:
        fail(f"encode({word!r}, ...) returned pieces that join to {''.join(got)!r}")


def overlapping(d):
    """Runs of one letter: the pair ("a", "a") overlaps itself."""
    counts = {"a" * d.integer(2, 9): d.integer(1, 5) for _ in range(d.integer(1, 4))}
    if d.case == 0:
        counts = {"aaaa": 1}
    return case(counts, d.integer(1, 8), min_count=1)


def ties(d):
    """Every pair equally frequent: 8 distinct letters cut into words of 2 to 4, one count."""
    letters = [chr(ord("a") + i) for i in d.permutation(8)]
    count, counts, i = d.integer(1, 5), {}, 0
    while i < len(letters) - 1:
        n = d.integer(2, 4)
        counts["".join(letters[i : i + n])] = count
        i += n
    return case(counts, d.integer(1, 7), min_count=1)


def near_threshold(d):
    """Counts around min_count, so the early stop decides how many merges there are."""
    m = d.choice([2, 3, 4])
    counts = {}
    for _ in range(d.size(2, 8)):
        counts["".join(d.choice("abcd") for _ in range(d.integer(2, 5)))] = d.integer(1, m)
    return case(counts, 40, min_count=m)


def merge_count(sol, c):
    """How many merges were learned, as a tensor (nontrivial compares norms)."""
    return torch.tensor([float(len(merges_of(sol, c)))])


def timing_case(d):
    """A fixed corpus of 24 words, 12 merges, for the performance test."""
    words = ["lower", "lowest", "newer", "newest", "wider", "widest", "slow", "slower",
             "new", "renew", "owner", "towers", "sweet", "tweet", "street", "stew",
             "lot", "slot", "plot", "pilot", "pivot", "trivet", "rivet", "river"]
    return case({w: 1 + (i * 7) % 11 for i, w in enumerate(words)}, 12, 2)


DECLARATIONS = [
    values("merges of a drawn corpus", "train_bpe", training, expect=trusted, visible=True,
           dtypes=("float64",), description="words over a small alphabet, drawn counts"),
    values("more corpora, longer words", "train_bpe",
           lambda d: training(d, longest=14, top=40), expect=trusted, cases=5,
           dtypes=("float64",)),
    values("min_count left at its default", "train_bpe", default_min, expect=trusted, cases=4,
           dtypes=("float64",)),
    values("encoding with trained merges", "encode", encoding,
           expect=lambda c: trusted_encode(*c.args), visible=True, cases=4,
           dtypes=("float64",)),
    values("encoding new words and unseen characters", "encode",
           lambda d: encoding(d, unseen=True), expect=lambda c: trusted_encode(*c.args),
           cases=5, dtypes=("float64",)),
    values("ranks, not list order within the word", "encode", shuffled_merges, cases=5,
           dtypes=("float64",),
           description="merges listed out of training order, one of them twice"),
    values("merges listed in reverse", "encode", reversed_merges, cases=4,
           dtypes=("float64",),
           description="a training word, its merges listed last-learned first"),
    edge("one letter repeated: overlapping pairs", "train_bpe", overlapping, expect=trusted,
         cases=4, dtypes=("float64",), visible=True,
         description="{'aaaa': 1} learns ('a', 'a') then ('aa', 'aa')"),
    edge("encoding runs of one letter", "encode",
         lambda d: case("a" * d.integer(1, 12), [("a", "a"), ("aa", "a"), ("aa", "aa")]),
         expect=lambda c: trusted_encode(*c.args), cases=4, dtypes=("float64",)),
    edge("words with spaces", "train_bpe",
         lambda d: training(d, alphabet=d.choice(["a b", "ab "]), min_count=1),
         expect=trusted, cases=3, dtypes=("float64",),
         description="a space is a character like any other: 'a b' starts as a,  , b"),
    edge("encoding a word with spaces", "encode",
         lambda d: case(d.choice(["a b a b", " ab ab ", "ab  ab"]),
                        trusted_train({"a b a b": 3, "ab ab": 2, " a": 1}, 8, 1)),
         expect=lambda c: trusted_encode(*c.args), cases=3, dtypes=("float64",)),
    edge("ties everywhere", "train_bpe", ties, expect=trusted, cases=4, dtypes=("float64",)),
    edge("counts around min_count", "train_bpe", near_threshold, expect=trusted, cases=4,
         dtypes=("float64",)),
    edge("an empty corpus, zero merges, single letters", "train_bpe",
         lambda d: d.choice([case({}, 5), case(vocabulary(d), 0),
                             case({"a": 3, "b": 4, "c": 1}, 3, min_count=1)]),
         expect=trusted, cases=4, dtypes=("float64",)),
    edge("encoding the empty word, or without merges", "encode",
         lambda d: d.choice([case("", [("a", "b")]), case("abcab", [])]),
         expect=lambda c: trusted_encode(*c.args), cases=3, dtypes=("float64",)),
    prop("encoding a training word reproduces its training segmentation",
         encode_matches_training, lambda d: training(d, min_count=1), cases=4,
         dtypes=("float64",)),
    prop("the order of the corpus does not matter", order_does_not_matter, training,
         cases=4, dtypes=("float64",)),
    prop("scaling every count changes nothing with min_count 1", scaled_counts, training,
         cases=3, dtypes=("float64",)),
    prop("encode returns strings that join back to the word", encode_concatenates,
         lambda d: encoding(d, unseen=True), cases=3, dtypes=("float64",), visible=True),
    nontrivial("learns some merges", merge_count,
               lambda d: case(vocabulary(d, words=6, alphabet="ab"), 5, min_count=1)),
    performance("time against the reference", "train_bpe", timing_case, calls=4,
                description="24 words, 12 merges; reported with its spread, not graded in "
                "this exercise"),
]
