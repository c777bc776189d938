"""Question files (`NN-slug.questions.yml` beside an item): parsed and checked against the
item they belong to, then written so that each question and choice keeps its database id
across edits (what learners answered stays attached)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml
from sqlalchemy import delete
from sqlmodel import Session, col, select

from app.importer.errors import ContentError
from app.models import Choice, Question

QUESTIONS_SUFFIX = ".questions.yml"
MIN_CHOICES, MAX_CHOICES = 3, 4


@dataclass(frozen=True)
class ChoiceSpec:
    text: str
    correct: bool
    why: str


@dataclass(frozen=True)
class QuestionSpec:
    prompt: str
    model_answer: str
    key_points: tuple[str, ...]
    choices: tuple[ChoiceSpec, ...]
    check_code: str = ""
    check_stdout: str = ""
    code: str = ""  # shown with the prompt; a question with code always has a check


def questions_path(item_rel: str) -> str:
    """deep-learning/08-dropout.md → deep-learning/08-dropout.questions.yml"""
    return item_rel.removesuffix(".md") + QUESTIONS_SUFFIX


def parse_questions(text: str, rel: str, *, slug: str, prompts: list[str]) -> list[QuestionSpec]:
    """The questions of a file, one per prompt of the item, in the item's order."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ContentError(rel, (mark.line + 1) if mark else 1, f"invalid YAML: {exc}") from None
    if not isinstance(data, dict) or set(data) != {"item", "questions"}:
        raise ContentError(rel, 1, "expected exactly the keys 'item' and 'questions'")
    if data["item"] != slug:
        raise ContentError(rel, 1, f"item is '{data['item']}', but the file beside is '{slug}'")
    entries = data["questions"]
    if not isinstance(entries, list):
        raise ContentError(rel, 1, "questions must be a list")
    found = [e.get("prompt") if isinstance(e, dict) else None for e in entries]
    for n, entry in enumerate(entries[len(prompts) :], start=len(prompts) + 1):
        if isinstance(entry, dict) and "asks" in entry:
            raise ContentError(rel, 1, f"question {n}: only an item's own prompts take 'asks'")
    if found[: len(prompts)] != prompts:
        raise ContentError(
            rel,
            1,
            "the first questions' prompts must be the item's quiz_prompts, word for word, in order",
        )
    _check_added_prompts(found[len(prompts) :], rel, first=len(prompts) + 1)
    if len(set(map(str, found))) != len(found):
        raise ContentError(rel, 1, "two questions of the file have the same prompt")
    return [_question(entry, rel, n) for n, entry in enumerate(entries, start=1)]


def _check_added_prompts(added: list[object], rel: str, *, first: int) -> None:
    """Questions after the item's own prompts are the bank's additions: each states its own
    prompt, a question that appears once in the file."""
    for n, prompt in enumerate(added, start=first):
        if not isinstance(prompt, str) or not prompt.strip().endswith("?"):
            raise ContentError(rel, 1, f"question {n}: prompt must be a question ending in '?'")


def _question(entry: dict[str, Any], rel: str, n: int) -> QuestionSpec:
    where = f"question {n}"
    known = {"prompt", "asks", "model_answer", "key_points", "choices", "check", "code"}
    unknown = sorted(set(entry) - known)
    if unknown:
        raise ContentError(rel, 1, f"{where}: unknown key '{unknown[0]}'")
    answer = _text(entry.get("model_answer"), rel, f"{where}: model_answer")
    points = entry.get("key_points")
    if not isinstance(points, list) or not 2 <= len(points) <= 4:
        raise ContentError(rel, 1, f"{where}: key_points must list 2 to 4 points")
    choices = entry.get("choices")
    if not isinstance(choices, list) or not MIN_CHOICES <= len(choices) <= MAX_CHOICES:
        raise ContentError(rel, 1, f"{where}: choices must list {MIN_CHOICES} to {MAX_CHOICES}")
    specs = tuple(
        ChoiceSpec(
            text=_text(c.get("text") if isinstance(c, dict) else None, rel, f"{where}: choice"),
            correct=bool(c.get("correct", False)),
            why=_text(c.get("why"), rel, f"{where}: a choice's why"),
        )
        for c in choices
    )
    if sum(c.correct for c in specs) != 1:
        raise ContentError(rel, 1, f"{where}: exactly one choice must be correct")
    check = entry.get("check") or {}
    if check and (not isinstance(check, dict) or set(check) != {"code", "stdout"}):
        raise ContentError(rel, 1, f"{where}: check needs exactly 'code' and 'stdout'")
    code = entry.get("code", "")
    if not isinstance(code, str) or ("code" in entry and not code.strip()):
        raise ContentError(rel, 1, f"{where}: code must be non-empty text")
    if code and not check:
        # What a code question's key says the code prints must be proven by running it.
        raise ContentError(rel, 1, f"{where}: a question with code needs a check")
    # `asks`: how the quizzes word an item's own prompt when the seed's wording repeats
    # another item's (the item page keeps the seed's prompt; its answer still answers it).
    asks = entry.get("asks", entry["prompt"])
    if not isinstance(asks, str) or not asks.strip().endswith("?"):
        raise ContentError(rel, 1, f"{where}: asks must be a question ending in '?'")
    return QuestionSpec(
        prompt=asks.strip(),
        model_answer=answer,
        key_points=tuple(_text(p, rel, f"{where}: key point") for p in points),
        choices=specs,
        check_code=str(check.get("code", "")),
        check_stdout=str(check.get("stdout", "")),
        code=code.rstrip("\n"),
    )


def _text(value: object, rel: str, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ContentError(rel, 1, f"{what} must be non-empty text")
    return value.strip()


def write_questions(
    session: Session,
    item_id: int,
    specs: list[QuestionSpec],
    *,
    highlight: Callable[[str], str],
) -> None:
    """Make the item's questions these, keeping ids by position; `highlight` renders shown
    code to HTML (the renderer's, passed in: it imports the parser, which imports this)."""
    existing = {
        q.position: q for q in session.exec(select(Question).where(Question.item_id == item_id))
    }
    for position, spec in enumerate(specs, start=1):
        fields = {
            "prompt": spec.prompt,
            "model_answer": spec.model_answer,
            "key_points": "\n".join(spec.key_points),
            "check_code": spec.check_code,
            "check_stdout": spec.check_stdout,
            "code": spec.code,
            "code_html": highlight(spec.code) if spec.code else "",
        }
        question = existing.pop(position, None)
        if question is None:
            question = Question(
                item_id=item_id,
                position=position,
                prompt=spec.prompt,
                model_answer=spec.model_answer,
                key_points=fields["key_points"],
            )
        for key, value in fields.items():
            setattr(question, key, value)
        session.add(question)
        session.flush()
        assert question.id is not None
        _write_choices(session, question.id, spec.choices)
    for stale in existing.values():
        session.delete(stale)


def _write_choices(session: Session, question_id: int, specs: tuple[ChoiceSpec, ...]) -> None:
    existing = {
        c.position: c for c in session.exec(select(Choice).where(Choice.question_id == question_id))
    }
    for position, spec in enumerate(specs, start=1):
        choice = existing.pop(position, None)
        if choice is None:
            choice = Choice(
                question_id=question_id,
                position=position,
                text=spec.text,
                correct=spec.correct,
                why=spec.why,
            )
        else:
            choice.text, choice.correct, choice.why = spec.text, spec.correct, spec.why
        session.add(choice)
    session.flush()
    if existing:
        stale = [c.id for c in existing.values()]
        session.execute(delete(Choice).where(col(Choice.id).in_(stale)))
