"""Test-wise rules: how well a guesser who knows nothing but the options' form would do.

Each rule looks at one question's options (and its prompt) and either picks a set of options
(ties are a set) or abstains. Scored as expected accuracy: a pick of k options that holds the
key scores 1/k, a pick without the key 0, and an abstention the chance of a blind guess,
1/len(options) (0.25 with four options). A bank whose options carry no cue holds every rule
near chance; a rule well above it means the key can be spotted without the knowledge."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from app.importer.option_tokens import token_similarity
from app.importer.questions import MAX_CHOICES

MAX_RULE_SCORE = 0.35  # no rule may guess more keys than this over the whole bank
MAX_CODE_RULE_SCORE = 0.40  # nor more than this over the questions that show code alone

# What a guesser notices: a clause break or an aside. A hyphen inside a word ("weight-sharing")
# is not a dash; a spaced hyphen or an en/em dash is.
PUNCTUATION = re.compile(r"[;:()]|[—–]|\s-\s")
NUMBER = re.compile(r"\d")
CODE_SPAN = re.compile(r"`[^`]+`")
ABSOLUTE = re.compile(r"\b(always|never|only|all|none|must|cannot|any)\b", re.IGNORECASE)
WORD = re.compile(r"[a-z0-9_]+")
# Words too common to count as echoing the prompt.
STOPWORDS = frozenset(
    re.split(
        r"\s+",
        "the and for are was were that this with from into onto than then them they their there "
        "what which when where why how does did has have had its not but can you your our one "
        "each per more most less also just use used uses using like over under about between "
        "will would should could being been because while after before",
    )
)


@dataclass(frozen=True)
class BankQuestion:
    """One question of the bank, as much of it as the rules and the report need."""

    where: str  # deck/NN-slug#position
    deck: str
    topic: str
    prompt: str
    options: tuple[str, ...]
    key: int  # index into options
    code: str = ""
    has_check: bool = False
    model_answer: str = ""


Pick = frozenset[int] | None
Rule = Callable[[BankQuestion], Pick]


def _by_length(q: BankQuestion, rank: int) -> Pick:
    """The option at place `rank` when the options are sorted longest first (0 = longest,
    -1 = shortest, -2 = second-shortest), with every option as long as it: a tie is picked
    as a set. Abstains when all options are as long, or when there is no such place."""
    lengths = [len(o) for o in q.options]
    if len(set(lengths)) < 2 or not -len(lengths) <= rank < len(lengths):
        return None
    target = sorted(lengths, reverse=True)[rank]
    return frozenset(n for n, length in enumerate(lengths) if length == target)


ORDINALS = ("", "second-", "third-", "fourth-", "fifth-")


def length_rank_rules(options: int = MAX_CHOICES) -> dict[str, Rule]:
    """One rule per place in the order of length, for questions of up to `options` options:
    longest, second-longest, ..., second-shortest, shortest. A question with fewer options
    is read from both ends (with three, second-longest and second-shortest are the middle)."""
    from_top = [(f"{ORDINALS[k]}longest option", k) for k in range((options + 1) // 2)]
    from_bottom = [(f"{ORDINALS[k]}shortest option", -1 - k) for k in range(options // 2)]
    return {name: partial(_by_length, rank=rank) for name, rank in from_top + from_bottom[::-1]}


def longest(q: BankQuestion) -> Pick:
    return _by_length(q, 0)


def second_longest(q: BankQuestion) -> Pick:
    return _by_length(q, 1)


def second_shortest(q: BankQuestion) -> Pick:
    return _by_length(q, -2)


def shortest(q: BankQuestion) -> Pick:
    return _by_length(q, -1)


def most_alike(q: BankQuestion) -> Pick:
    """On a question that shows code, the option(s) most like the others: the largest sum of
    token similarity (app/importer/option_tokens.py) with every other option. Where each
    distractor is the key with one part changed, the key is the one they all resemble.
    Abstains on questions without code and when every option is as alike."""
    if not q.code:
        return None
    alike = [
        sum(token_similarity(o, other) for m, other in enumerate(q.options) if m != n)
        for n, o in enumerate(q.options)
    ]
    if len(set(alike)) < 2:
        return None
    return frozenset(n for n, score in enumerate(alike) if score == max(alike))


def _only(q: BankQuestion, has: Callable[[str], bool]) -> Pick:
    """The one option for which `has` holds, or an abstention when it is not alone."""
    hits = [n for n, o in enumerate(q.options) if has(o)]
    return frozenset(hits) if len(hits) == 1 else None


def only_punctuation(q: BankQuestion) -> Pick:
    return _only(q, lambda o: bool(PUNCTUATION.search(o)))


def only_number(q: BankQuestion) -> Pick:
    return _only(q, lambda o: bool(NUMBER.search(o)))


def only_code_span(q: BankQuestion) -> Pick:
    return _only(q, lambda o: bool(CODE_SPAN.search(o)))


def only_hedged(q: BankQuestion) -> Pick:
    """The one option without an absolute word, when the others all have one."""
    return _only(q, lambda o: not ABSOLUTE.search(o))


def content_tokens(text: str) -> list[str]:
    """The words of `text` that carry meaning, in order, repeats kept."""
    return [w for w in WORD.findall(text.lower()) if len(w) > 2 and w not in STOPWORDS]


def content_words(text: str) -> set[str]:
    return set(content_tokens(text))


def echoes_prompt(q: BankQuestion) -> Pick:
    """The option(s) sharing the most content words with the prompt."""
    asked = content_words(q.prompt)
    shared = [len(content_words(o) & asked) for o in q.options]
    if max(shared) == 0:
        return None
    return frozenset(n for n, count in enumerate(shared) if count == max(shared))


# The guesser of the issue: the first of these that singles an option out, else second-longest.
DECISION_LIST: tuple[Rule, ...] = (only_punctuation, only_number, only_code_span, only_hedged)


def decision_list(q: BankQuestion) -> Pick:
    for rule in DECISION_LIST:
        pick = rule(q)
        if pick is not None:
            return pick
    return second_longest(q)


RULES: dict[str, Rule] = {
    **length_rank_rules(),
    "most alike the others (code questions)": most_alike,
    "only one with ; : ( ) or a dash": only_punctuation,
    "only one with a number": only_number,
    "only one with a code span": only_code_span,
    "only one without an absolute word": only_hedged,
    "echoes the prompt most": echoes_prompt,
    "decision list": decision_list,
}


def expected_hit(rule: Rule, q: BankQuestion) -> float:
    """The chance that a guesser following `rule` picks the key of `q`."""
    pick = rule(q)
    if pick is None:
        return 1 / len(q.options)
    return 1 / len(pick) if q.key in pick else 0.0


def rule_scores(questions: Sequence[BankQuestion]) -> dict[str, float]:
    """Each rule's expected accuracy over `questions` (0..1); empty when there are none."""
    if not questions:
        return {}
    return {
        name: sum(expected_hit(rule, q) for q in questions) / len(questions)
        for name, rule in RULES.items()
    }


def best_rule(questions: Sequence[BankQuestion]) -> tuple[str, float]:
    """The rule that guesses best over `questions`, and its expected accuracy."""
    scores = rule_scores(questions)
    if not scores:
        return ("", 0.0)
    name = max(scores, key=lambda n: scores[n])
    return name, scores[name]
