"""The question bank, linted as a reviewer would read it: every prompt covered, one key per
question, no duplicate options, explanations present, keys not given away by their length,
and key positions spread evenly once attempts shuffle the options."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from app.importer.parse import parse_catalogue, parse_item
from app.importer.questions import QUESTIONS_SUFFIX, parse_questions
from tests.support.paths import CONTENT_DIR

CATALOGUE = parse_catalogue(CONTENT_DIR / "decks.yml", "decks.yml")
ITEMS = {
    path: parse_item(path.read_text(encoding="utf-8"), f"{deck}/{path.name}", CATALOGUE)
    for deck in ("deep-learning", "pytorch-essentials")
    for path in sorted((CONTENT_DIR / deck).glob("*.md"))
}
BANNED = re.compile(r"\b(all|none|both|neither) of (the )?(above|these)\b", re.IGNORECASE)


def bank_file(item_path: Path) -> Path:
    return item_path.with_name(item_path.name.removesuffix(".md") + QUESTIONS_SUFFIX)


def questions() -> list[tuple[str, dict]]:  # type: ignore[type-arg]
    found = []
    for path in ITEMS:
        beside = bank_file(path)
        if beside.exists():
            data = yaml.safe_load(beside.read_text(encoding="utf-8"))
            found += [(f"{beside.name}#{n}", q) for n, q in enumerate(data["questions"], 1)]
    return found


QUESTIONS = questions()


def test_every_deep_learning_prompt_is_a_question() -> None:
    dl = {p: i for p, i in ITEMS.items() if i.deck == "deep-learning"}
    assert len(dl) == 38
    missing = [p.name for p in dl if not bank_file(p).exists()]
    assert missing == []
    assert sum(len(i.quiz_prompts) for i in dl.values()) == 76


def test_every_essentials_item_has_at_least_two_prompts_made_questions() -> None:
    essentials = {p: i for p, i in ITEMS.items() if i.deck == "pytorch-essentials"}
    assert len(essentials) == 20
    thin = [p.name for p, i in essentials.items() if len(i.quiz_prompts) < 2]
    assert thin == []
    assert [p.name for p in essentials if not bank_file(p).exists()] == []


def test_every_file_imports_against_its_item() -> None:
    for path, item in ITEMS.items():
        beside = bank_file(path)
        if beside.exists():
            specs = parse_questions(
                beside.read_text(encoding="utf-8"),
                beside.name,
                slug=item.slug,
                prompts=item.quiz_prompts,
            )
            assert len(specs) >= len(item.quiz_prompts)


@pytest.mark.parametrize(("where", "question"), QUESTIONS, ids=[w for w, _ in QUESTIONS])
def test_a_question_is_well_formed(where: str, question: dict) -> None:  # type: ignore[type-arg]
    choices = question["choices"]
    assert 3 <= len(choices) <= 4
    assert sum(bool(c.get("correct")) for c in choices) == 1, "exactly one key"
    texts = [c["text"].strip().lower() for c in choices]
    assert len(set(texts)) == len(texts), "duplicate options"
    assert all(c.get("why", "").strip() for c in choices), "every option explained"
    assert not any(BANNED.search(c["text"]) for c in choices), "no all/none of the above"
    sentences = len(re.findall(r"[.!?](\s|$)", question["model_answer"].strip()))
    assert 2 <= sentences <= 6, f"model answer of {sentences} sentences"
    assert 2 <= len(question["key_points"]) <= 4


def test_the_key_is_the_longest_option_in_at_most_40_percent_of_questions() -> None:
    longest = 0
    for _, question in QUESTIONS:
        key = next(c["text"] for c in question["choices"] if c.get("correct"))
        longest += len(key) >= max(len(c["text"]) for c in question["choices"])
    assert QUESTIONS and longest / len(QUESTIONS) <= 0.40, f"{longest} of {len(QUESTIONS)}"


def test_key_positions_spread_evenly_once_shuffled() -> None:
    """Attempts shuffle options as app/study/quizzes.py does: over many attempts the key
    lands in every position about equally often."""
    rng = random.Random(7)
    seen: Counter[int] = Counter()
    for _ in range(200):
        for _, question in QUESTIONS:
            order = list(range(len(question["choices"])))
            rng.shuffle(order)
            key = next(n for n, c in enumerate(question["choices"]) if c.get("correct"))
            seen[order.index(key)] += 1
    total = sum(seen.values())
    shares = {position: count / total for position, count in seen.items()}
    assert all(0.18 <= share <= 0.40 for share in shares.values()), shares
    authored = Counter(
        next(n for n, c in enumerate(q["choices"]) if c.get("correct")) for _, q in QUESTIONS
    )
    assert max(authored.values()) <= 0.5 * len(QUESTIONS), authored  # not always first
