"""What a search query means: its words without the filler interview questions are phrased
with ("difference between", "vs"), spelling variants mapped to the content's, and typos
corrected against the words the content actually uses."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

# Words that say how a question is asked, not what it is about. Dropped unless the query is
# nothing else (then it is searched as typed).
_FILLER = """
    a an and are as at be between by can compare compared comparison difference differences
    do does explain for from how i in into is it its of on or should the their them they
    this to use used using versus vs what when where which who why with you your
"""
STOP_WORDS = frozenset(_FILLER.split())
# Spelling variants and abbreviations, to the word the content uses (several words: all of
# them must match). Keys and values are lower case.
SYNONYMS = {
    "optimiser": "optimizer",
    "optimisers": "optimizers",
    "optimise": "optimize",
    "optimisation": "optimization",
    "normalisation": "normalization",
    "normalise": "normalize",
    "regularisation": "regularization",
    "initialisation": "initialization",
    "initialise": "initialize",
    "quantisation": "quantization",
    "modelling": "modeling",
    "behaviour": "behavior",
    "colour": "color",
    "lr": "learning rate",
    "cnn": "convolutional",
    "cnns": "convolutional",
    "convnet": "convolutional",
    "batchnorm": "batch norm",
    "layernorm": "layer norm",
    "bn": "batch norm",
    "ln": "layer norm",
    "amp": "mixed precision",
    "fp16": "mixed precision",
    "gans": "gan",
    "transformer": "transformers",
    "dataloaders": "dataloader",
}
MIN_CORRECTED_LENGTH = 4  # shorter words are too often someone's abbreviation


@dataclass(frozen=True)
class Understood:
    """The words to search for, and the query as corrected when a typo was fixed."""

    terms: list[str]
    corrected: str | None = None  # shown as "Showing results for …"


@dataclass
class Vocabulary:
    """The words of the content (titles, prose, code), with how often each occurs, and an
    index of their letter pairs to find candidates for a misspelt word quickly."""

    counts: Counter[str]
    _pairs: dict[str, set[str]] = field(default_factory=dict)
    _corrections: dict[str, str | None] = field(default_factory=dict)

    @classmethod
    def of(cls, texts: Iterable[str]) -> Vocabulary:
        counts: Counter[str] = Counter()
        for text in texts:
            counts.update(w for w in re.findall(r"[a-z][a-z0-9]+", text.lower()) if len(w) > 2)
        vocabulary = cls(counts)
        for word in counts:
            for pair in _pairs_of(word):
                vocabulary._pairs.setdefault(pair, set()).add(word)
        return vocabulary

    def knows(self, term: str) -> bool:
        """Whether the term is a word of the content or begins one (searches match prefixes)."""
        if term in self.counts:
            return True
        return any(word.startswith(term) for word in self._pairs.get(term[:2], ()))

    def correction(self, term: str) -> str | None:
        """The content's word closest to a misspelt `term` (fewest edits, then most used),
        or None when none is close: 1 edit for words up to 5 letters, 2 beyond."""
        if term in self._corrections:
            return self._corrections[term]
        limit = 1 if len(term) <= 5 else 2
        shared: Counter[str] = Counter()
        for pair in _pairs_of(term):
            shared.update(self._pairs.get(pair, ()))
        best: tuple[int, int, str] | None = None
        for word, _ in shared.most_common(60):
            if abs(len(word) - len(term)) > limit:
                continue
            distance = edit_distance(term, word, limit)
            if distance <= limit:
                key = (distance, -self.counts[word], word)
                best = key if best is None or key < best else best
        found = best[2] if best else None
        if len(self._corrections) < 4096:  # queries are endless; the cache is not
            self._corrections[term] = found
        return found


def understand(words: list[str], vocabulary: Vocabulary | None) -> Understood:
    """The search terms for the words of a query (see search.search_terms)."""
    lowered = [w.lower() for w in words]
    kept = [w for w in lowered if w not in STOP_WORDS] or lowered
    terms: list[str] = []
    corrected = False
    for word in kept:
        word = SYNONYMS.get(word, word)
        for term in word.split():
            if (
                vocabulary is not None
                and len(term) >= MIN_CORRECTED_LENGTH
                and term.isalpha()
                and not vocabulary.knows(term)
            ):
                fixed = vocabulary.correction(term)
                if fixed is not None:
                    term, corrected = fixed, True
            if term not in terms:
                terms.append(term)
    return Understood(terms, " ".join(terms) if corrected else None)


def edit_distance(a: str, b: str, limit: int) -> int:
    """Damerau-Levenshtein distance (a swap of neighbours is one edit), or limit + 1 once it
    is sure to be more than `limit`."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, start=1):
            cost = 0 if ca == cb else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        previous2, previous = previous, current
    return previous[-1]


def _pairs_of(word: str) -> set[str]:
    return {word[i : i + 2] for i in range(len(word) - 1)}
