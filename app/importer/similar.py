"""Near-duplicate questions: two questions of the bank that ask the same thing, in one deck or
across the decks, or that show the same program.

Words. The cosine of TF-IDF word vectors (weights learnt over the whole bank, so words every
question uses count for little), taken twice and the higher counts: the prompts alone (the
same question reworded) and each question whole, prompt, key, model answer and code together
(different words around the same answer).

Code. Questions that show code are compared once more, on the code alone: the cosine of TF-IDF
vectors over pairs of consecutive identifiers (`lr_scheduler StepLR`, `running_mean print`),
import lines, comments and numbers left out, weights learnt over the questions that show code
(so `torch tensor` counts for little). Pairs keep the order of calls that single names lose:
two short autograd programs share `requires_grad`, `backward`, `grad` and `item` without being
the same program. The same program with other numbers or one line more scores high whatever
the prompts say.

Thresholds, calibrated on the bank as it stood before its cross-deck review (frozen in
tests/data/bank_before_dedup.yml), whose reviewer found pairs that repeat across the decks,
several running the same code, and one pair inside a deck scoring 0.36 under the words alone:

- `THRESHOLD` 0.35, two questions of the same deck: that pair (deep-learning 12#3, softmax
  before CrossEntropyLoss, and 38#4, why the network returns logits) asks the same thing in
  other words, so the bar sits just under it. The other pairs of a deck between 0.35 and 0.40
  were one fact asked from two sides too (Xavier's variance and He's, Leaky ReLU's slope and
  its gradient at three points).
- `CROSS_DECK_THRESHOLD` 0.45, two questions of different decks: the two decks teach the same
  topics from two sets of seed texts, so matching items share their topic's vocabulary
  (state_dict, DataLoader, eval). The pairs the review found across decks scored 0.49 or more;
  between 0.40 and 0.44 are the same topic from another side (trace against script, and what
  replaces TorchScript; why early stopping regularises, and how to write it), and the one
  same-program pair there (0.44) is found by its code.
- `CODE_THRESHOLD` 0.40 on the code alone: the six programs that repeat (BatchNorm1d on a batch
  of one, integer against float targets for a loss, one optimizer step on a hand-set gradient,
  a scheduler stepped in a loop, the default collate of dict samples, a loop that keeps the
  loss tensor) scored 0.43 to 0.81; the next pairs, different programs on one API (StepLR
  stepped per batch against a cosine schedule, an LSTM's against a Conv1d's output shapes),
  0.35 or less. Exporting with a static batch repeats in other words (0.29 on the code) and is
  found by the words, at 0.51.

On that bank the check found 35 pairs; one question of each was rewritten into a question on
another aspect of its item (30 questions, some in two pairs)."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations, pairwise

from app.importer.cues import BankQuestion, content_tokens

THRESHOLD = 0.35  # words, two questions of one deck
CROSS_DECK_THRESHOLD = 0.45  # words, two questions of different decks
CODE_THRESHOLD = 0.40  # the code alone, any two questions that show code

Vector = dict[str, float]

# Code tokens: identifiers, dotted names split at the dot; numbers are left out (the same
# program with other sizes is the same program).
CODE_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class SimilarPair:
    first: str  # a question's `where`
    second: str
    similarity: float  # the words' cosine
    code_similarity: float = 0.0  # the code's cosine, 0 when either shows no code

    @property
    def why(self) -> str:
        """Which comparison found the pair, with its score."""
        return f"words {self.similarity:.2f}, code {self.code_similarity:.2f}"


def _weigh(counts: Sequence[Counter[str]]) -> list[Vector]:
    """Unit TF-IDF vectors: log-scaled counts times smoothed inverse document frequency."""
    documents = Counter(word for c in counts for word in c)
    n = len(counts)
    vectors = []
    for c in counts:
        weights = {
            w: (1 + math.log(k)) * math.log((1 + n) / (1 + documents[w])) for w, k in c.items()
        }
        norm = math.sqrt(sum(v * v for v in weights.values())) or 1.0
        vectors.append({w: v / norm for w, v in weights.items()})
    return vectors


def _vectors(texts: Sequence[str]) -> list[Vector]:
    return _weigh([Counter(content_tokens(t)) for t in texts])


def code_tokens(code: str) -> list[str]:
    """The identifiers of a program in order, repeats kept; comments and imports dropped."""
    lines = (line.split("#", 1)[0] for line in code.splitlines())
    kept = (line for line in lines if not line.strip().startswith(("import ", "from ")))
    return CODE_WORD.findall("\n".join(kept))


def code_pairs(code: str) -> Counter[str]:
    """Consecutive identifiers of a program, counted: what it calls on what, in order."""
    tokens = code_tokens(code)
    return Counter(f"{a} {b}" for a, b in pairwise(tokens))


def _cosine(a: Vector, b: Vector) -> float:
    if len(b) < len(a):
        a, b = b, a
    return sum(v * b.get(w, 0.0) for w, v in a.items())


def _threshold(a: BankQuestion, b: BankQuestion) -> float:
    return THRESHOLD if a.deck == b.deck else CROSS_DECK_THRESHOLD


def similarities(questions: Sequence[BankQuestion]) -> list[SimilarPair]:
    """Every pair of questions, in one deck or across decks, most alike first (by how far
    over its threshold the pair is)."""
    prompts = _vectors([q.prompt for q in questions])
    whole = _vectors(
        [f"{q.prompt} {q.options[q.key]} {q.model_answer} {q.code}" for q in questions]
    )
    shown = [n for n, q in enumerate(questions) if q.code]
    code_vectors = _weigh([code_pairs(questions[n].code) for n in shown])
    code = dict(zip(shown, code_vectors, strict=True))
    pairs = []
    for i, j in combinations(range(len(questions)), 2):
        words = max(_cosine(prompts[i], prompts[j]), _cosine(whole[i], whole[j]))
        same_code = _cosine(code[i], code[j]) if i in code and j in code else 0.0
        pairs.append(SimilarPair(questions[i].where, questions[j].where, words, same_code))
    by_name = {q.where: q for q in questions}

    def excess(p: SimilarPair) -> float:
        a, b = by_name[p.first], by_name[p.second]
        return max(p.similarity - _threshold(a, b), p.code_similarity - CODE_THRESHOLD)

    return sorted(pairs, key=excess, reverse=True)


def near_duplicates(
    questions: Sequence[BankQuestion],
    threshold: float = THRESHOLD,
    *,
    cross_deck: float = CROSS_DECK_THRESHOLD,
    code: float = CODE_THRESHOLD,
) -> list[SimilarPair]:
    """The pairs whose words reach `threshold` (one deck) or `cross_deck` (two decks), or
    whose code reaches `code`, most alike first."""
    by_name = {q.where: q for q in questions}
    found = []
    for p in similarities(questions):
        bar = threshold if by_name[p.first].deck == by_name[p.second].deck else cross_deck
        if p.similarity >= bar or p.code_similarity >= code:
            found.append(p)
    return found
