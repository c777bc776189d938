"""Options read as sequences of parts, for the questions that ask what code prints or does.

A part (token) is a number with its sign (`3`, `-0.5`, `1e-05`), a word or dotted name
(`tensor`, `requires_grad`, `torch.float32`, `x.to`), or one punctuation mark (`(`, `,`,
`/`): `torch.Size([2, 3])` is `torch.Size ( [ 2 , 3 ] )`. Spaces only separate parts.

The distance between two options is the edit distance over their parts (Levenshtein: the
fewest parts replaced, inserted or deleted to turn one into the other). Changing one number
of the key is distance 1; swapping two numbers, or changing a number and a word, is 2. Their
similarity is 2·(longest common subsequence of parts) / (parts of both), from 0 (nothing in
common) to 1 (the same parts), kept exact as a fraction so that ties stay ties.

The options of a question that shows code are outputs (or what the code does). From three
parts on, each distractor must differ from the key in at least MIN_PARTS_CHANGED parts, so that
none is the key with one number, word or sign changed: `(4, 4) 0.0` against the key
`(4, 4) 2.5` is a fault, `(2, 2) 0.0` is not. An output of one or two parts (`54.0`,
`True False`, `5 65`) has no second part to spare: there any other output will do, and the
most-alike rule of app/importer/cues.py keeps such distractors from surrounding the key.
Distractors must also differ from each other by at least one part."""

from __future__ import annotations

import re
from fractions import Fraction

TOKEN = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*|[^\w\s]")

MIN_PARTS_CHANGED = 2


def option_tokens(text: str) -> list[str]:
    """`text` split into its parts, in order."""
    return TOKEN.findall(text)


def token_distance(a: str, b: str) -> int:
    """How many parts must change to turn `a` into `b` (0 when they have the same parts)."""
    x, y = option_tokens(a), option_tokens(b)
    row = list(range(len(y) + 1))
    for i, part in enumerate(x, start=1):
        diagonal, row[0] = row[0], i
        for j, other in enumerate(y, start=1):
            diagonal, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, diagonal + (part != other))
    return row[-1]


def token_similarity(a: str, b: str) -> Fraction:
    """2·(parts in common, in order) / (parts of both): 1 for the same parts, 0 for none."""
    x, y = option_tokens(a), option_tokens(b)
    if not x and not y:
        return Fraction(1)
    row = [0] * (len(y) + 1)
    for part in x:
        diagonal = 0
        for j, other in enumerate(y, start=1):
            diagonal, row[j] = row[j], diagonal + 1 if part == other else max(row[j], row[j - 1])
    return Fraction(2 * row[-1], len(x) + len(y))


def code_option_faults(options: tuple[str, ...], key: int) -> list[str]:
    """What breaks the rule above for one code question's options: empty when none does."""
    faults = []
    need = max(1, min(MIN_PARTS_CHANGED, len(option_tokens(options[key])) - 1))
    for n, option in enumerate(options):
        if n != key and token_distance(option, options[key]) < need:
            faults.append(
                f"option {n + 1} {option!r} is the key {options[key]!r} with one part changed"
            )
    distractors = [n for n in range(len(options)) if n != key]
    for i, n in enumerate(distractors):
        for m in distractors[i + 1 :]:
            if token_distance(options[n], options[m]) == 0:
                faults.append(f"options {n + 1} and {m + 1} have the same parts")
    return faults
