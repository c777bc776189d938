"""The question bank read straight from the content folder (no database), and its review:
per deck and topic, how many questions, how many show code, how many carry a check that CI
runs, and how well the best test-wise rule of app/importer/cues.py guesses the keys."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.importer.cues import RULES, BankQuestion, best_rule, rule_scores
from app.importer.parse import parse_catalogue, parse_item
from app.importer.questions import QUESTIONS_SUFFIX, parse_questions
from app.importer.readme_section import with_section

README_START = "<!-- bank-report:start -->"
README_END = "<!-- bank-report:end -->"


def load_bank(content_dir: Path) -> list[BankQuestion]:
    """Every question of every item that has a questions file, in deck and item order."""
    catalogue = parse_catalogue(content_dir / "decks.yml", "decks.yml")
    found: list[BankQuestion] = []
    for deck in catalogue.decks:
        for path in sorted((content_dir / deck.slug).glob("*.md")):
            beside = path.with_name(path.name.removesuffix(".md") + QUESTIONS_SUFFIX)
            if not beside.exists():
                continue
            rel = f"{deck.slug}/{path.name}"
            item = parse_item(path.read_text(encoding="utf-8"), rel, catalogue)
            specs = parse_questions(
                beside.read_text(encoding="utf-8"),
                f"{deck.slug}/{beside.name}",
                slug=item.slug,
                prompts=item.quiz_prompts,
            )
            for n, spec in enumerate(specs, start=1):
                found.append(
                    BankQuestion(
                        where=f"{rel.removesuffix('.md')}#{n}",
                        deck=item.deck,
                        topic=item.topic,
                        prompt=spec.prompt,
                        options=tuple(c.text for c in spec.choices),
                        key=next(i for i, c in enumerate(spec.choices) if c.correct),
                        code=spec.code,
                        has_check=bool(spec.check_code),
                        model_answer=spec.model_answer,
                    )
                )
    return found


def item_range(text: str) -> tuple[int, int]:
    """'1-19' → (1, 19); '7' → (7, 7)."""
    first, _, last = text.partition("-")
    try:
        low, high = int(first), int(last or first)
    except ValueError:
        raise ValueError(f"not an item range: {text!r} (e.g. 1-19)") from None
    if not 1 <= low <= high:
        raise ValueError(f"not an item range: {text!r} (e.g. 1-19)")
    return low, high


def item_number(question: BankQuestion) -> int:
    """deep-learning/08-dropout#2 → 8"""
    return int(question.where.split("/", 1)[1].split("-", 1)[0])


def subset(
    questions: Sequence[BankQuestion],
    *,
    deck: str | None = None,
    items: tuple[int, int] | None = None,
) -> list[BankQuestion]:
    """The questions of one deck, and of a range of its items, when asked for."""
    return [
        q
        for q in questions
        if (deck is None or q.deck == deck)
        and (items is None or items[0] <= item_number(q) <= items[1])
    ]


def to_records(questions: Iterable[BankQuestion]) -> list[dict[str, Any]]:
    """Plain data for a YAML fixture: the bank frozen as it was."""
    records = []
    for q in questions:
        record: dict[str, Any] = {
            "where": q.where,
            "deck": q.deck,
            "topic": q.topic,
            "prompt": q.prompt,
            "options": list(q.options),
            "key": q.key,
            "has_check": q.has_check,
            "model_answer": q.model_answer,
        }
        if q.code:
            record["code"] = q.code
        records.append(record)
    return records


def from_records(records: Iterable[dict[str, Any]]) -> list[BankQuestion]:
    return [
        BankQuestion(
            where=r["where"],
            deck=r["deck"],
            topic=r["topic"],
            prompt=r["prompt"],
            options=tuple(r["options"]),
            key=int(r["key"]),
            code=r.get("code", ""),
            has_check=bool(r.get("has_check")),
            model_answer=r.get("model_answer", ""),
        )
        for r in records
    ]


@dataclass(frozen=True)
class GroupRow:
    deck: str
    topic: str
    questions: int
    code: int
    checks: int
    best_rule: str
    best_score: float


def group_rows(questions: Sequence[BankQuestion]) -> list[GroupRow]:
    """One row per deck and topic, in the bank's order."""
    groups: dict[tuple[str, str], list[BankQuestion]] = {}
    for q in questions:
        groups.setdefault((q.deck, q.topic), []).append(q)
    rows = []
    for (deck, topic), members in groups.items():
        name, score = best_rule(members)
        rows.append(
            GroupRow(
                deck=deck,
                topic=topic,
                questions=len(members),
                code=sum(bool(q.code) for q in members),
                checks=sum(q.has_check for q in members),
                best_rule=name,
                best_score=score,
            )
        )
    return rows


def _percent(score: float) -> str:
    return f"{round(score * 100)}%"


def report_markdown(questions: Sequence[BankQuestion]) -> str:
    """The review as two Markdown tables: per deck and topic (then the whole bank, and its
    questions that show code), then every rule over the bank and over its code questions."""
    lines = [
        "| deck | topic | questions | with code | checks run | best test-wise rule | its score |",
        "|---|---|---:|---:|---:|---|---:|",
    ]
    for row in group_rows(questions):
        lines.append(
            f"| {row.deck} | {row.topic} | {row.questions} | {row.code} | {row.checks} "
            f"| {row.best_rule} | {_percent(row.best_score)} |"
        )
    code = [q for q in questions if q.code]
    for label, members in (("**all**", questions), ("**showing code**", code)):
        name, score = best_rule(members)
        lines.append(
            f"| {label} | | {len(members)} | {sum(bool(q.code) for q in members)} "
            f"| {sum(q.has_check for q in members)} | {name} | {_percent(score)} |"
        )
    lines += [
        "",
        "| test-wise rule | over every question above | over those showing code |",
        "|---|---:|---:|",
    ]
    scores, code_scores = rule_scores(questions), rule_scores(code)
    lines += [
        f"| {rule} | {_percent(scores.get(rule, 0.0))} | {_percent(code_scores.get(rule, 0.0))} |"
        for rule in RULES
    ]
    return "\n".join(lines)


def with_report(readme: str, table: str, *, where: str = "content/README.md") -> str:
    """`readme` with the text between the bank-report markers replaced by `table`."""
    return with_section(readme, table, start=README_START, end=README_END, where=where)
