"""Near-duplicate questions: two questions of a deck that ask the same thing, found by the
cosine of TF-IDF word vectors (weights learnt over the whole bank, so words every question
uses count for little).

Two questions are compared twice, and the higher cosine counts: their prompts alone (the same
question reworded) and each question whole, prompt, key and model answer together (different
words around the same answer). On the bank as it stood before its rewrite, this scores the
four pairs a reviewer found at 0.42 or more and every other pair of a deck at 0.39 or less."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from app.importer.cues import BankQuestion, content_tokens

THRESHOLD = 0.40

Vector = dict[str, float]


@dataclass(frozen=True)
class SimilarPair:
    first: str  # a question's `where`
    second: str
    similarity: float


def _vectors(texts: Sequence[str]) -> list[Vector]:
    """Unit TF-IDF vectors: log-scaled counts times smoothed inverse document frequency."""
    counts = [Counter(content_tokens(t)) for t in texts]
    documents = Counter(word for c in counts for word in c)
    n = len(texts)
    vectors = []
    for c in counts:
        weights = {
            w: (1 + math.log(k)) * math.log((1 + n) / (1 + documents[w])) for w, k in c.items()
        }
        norm = math.sqrt(sum(v * v for v in weights.values())) or 1.0
        vectors.append({w: v / norm for w, v in weights.items()})
    return vectors


def _cosine(a: Vector, b: Vector) -> float:
    if len(b) < len(a):
        a, b = b, a
    return sum(v * b.get(w, 0.0) for w, v in a.items())


def similarities(questions: Sequence[BankQuestion]) -> list[SimilarPair]:
    """Every pair of questions of the same deck, most alike first."""
    prompts = _vectors([q.prompt for q in questions])
    whole = _vectors(
        [f"{q.prompt} {q.options[q.key]} {q.model_answer} {q.code}" for q in questions]
    )
    pairs = [
        SimilarPair(
            questions[i].where,
            questions[j].where,
            max(_cosine(prompts[i], prompts[j]), _cosine(whole[i], whole[j])),
        )
        for i, j in combinations(range(len(questions)), 2)
        if questions[i].deck == questions[j].deck
    ]
    return sorted(pairs, key=lambda p: p.similarity, reverse=True)


def near_duplicates(
    questions: Sequence[BankQuestion], threshold: float = THRESHOLD
) -> list[SimilarPair]:
    """The pairs of a deck at or above `threshold`, most alike first."""
    return [p for p in similarities(questions) if p.similarity >= threshold]
