"""content/exercises/<slug>/ → `exercise` rows: what a learner may see of each exercise.

Only the public side is stored: exercise.yml's metadata, the statement (rendered once), the
starter, the visible tests' names and the follow-up prompts (followups.yml: what an
interviewer asks about the code once it is graded). The reference, the tests' code, the
hints, the editorial and the mutants stay in the folder: a submission reads them from there
(app/exercises/catalogue.py) and sends them to the grader's jail only."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import yaml
from sqlmodel import Session, select

from app.importer.errors import ContentError
from app.importer.exercise_tests import visible_tests
from app.importer.forbidden import forbidden_section
from app.importer.render import render_markdown
from app.models import EXERCISE_DIFFICULTIES, Exercise, Item, Topic

EXERCISES_DIR = "exercises"
# The files whose content the stored row depends on (a change to any re-imports the row).
PUBLIC_FILES = ("exercise.yml", "statement.md", "starter.py", "tests.py")
BACKENDS = ("cpu", "cuda")
# Kept apart from exercise.yml, which travels to the grader's jail and whose keys the
# grader checks: follow-ups are for the learner, never for the grader.
FOLLOWUPS_FILE = "followups.yml"
# The suite's proof (sandbox/grading/mutation_run.py writes it); its counts are shown.
MUTATION_FILE = "mutation.json"
SUITE_KEY = "suite"
MAX_FOLLOWUPS = 3
KEY_POINTS_RANGE = (2, 6)  # as a prompt's key points: enough to grade, few enough to tick
# libyaml's parser where PyYAML was built with it: the pure-Python one was half of what the
# exercises cost at start-up (bench/exercise_import.py).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _yaml(text: str) -> Any:
    return yaml.load(text, Loader=_LOADER)


def exercise_folders(content_dir: Path) -> list[Path]:
    root = content_dir / EXERCISES_DIR
    if not root.is_dir():
        return []
    return [p for p in sorted(root.iterdir()) if p.is_dir() and not p.name.startswith(".")]


def sync_exercises(session: Session, content_dir: Path) -> tuple[list[str], list[str], list[str]]:
    """Bring the `exercise` rows in step with the folders (in the caller's transaction);
    the (added, updated, removed) slugs. ContentError for a folder that breaks the format."""
    existing = {e.slug: e for e in session.exec(select(Exercise))}
    topics = set(session.exec(select(Topic.slug)))
    items = set(session.exec(select(Item.slug)))
    added: list[str] = []
    updated: list[str] = []
    seen: set[str] = set()
    topic_rank = {slug: rank for slug, rank in session.exec(select(Topic.slug, Topic.position))}
    read = [(folder, _read(folder)) for folder in exercise_folders(content_dir)]
    read.sort(key=lambda pair: _set_order(pair[0], pair[1], topic_rank))
    for position, (folder, texts) in enumerate(read, start=1):
        digest = hashlib.sha256("\0".join(texts.values()).encode()).hexdigest()
        row = existing.get(folder.name)
        seen.add(folder.name)
        if row is not None and row.content_sha256 == digest and row.position == position:
            continue
        fields = _fields(folder, texts, topics, items)
        fields.update(position=position, content_sha256=digest)
        if row is None:
            row = Exercise(**fields)
            added.append(folder.name)
        else:
            for key, value in fields.items():
                setattr(row, key, value)
            updated.append(folder.name)
        session.add(row)
    removed = sorted(set(existing) - seen)
    for slug in removed:
        session.delete(existing[slug])
    session.flush()
    return added, updated, removed


def _set_order(
    folder: Path, texts: dict[str, str], topic_rank: dict[str, int]
) -> tuple[int, int, str, str]:
    """Where an exercise sits in the set: by topic (decks.yml's order), then difficulty, then
    title, as a learner scans the list. A folder whose metadata is broken sorts last; the
    import refuses it with its reason below."""
    try:
        meta = _yaml(texts["exercise.yml"]) or {}
        rank = topic_rank.get(str(meta.get("topic")), len(topic_rank))
        scale = EXERCISE_DIFFICULTIES
        level = scale.index(meta["difficulty"]) if meta.get("difficulty") in scale else 3
        return (rank, level, str(meta.get("title", "")).lower(), folder.name)
    except yaml.YAMLError:
        return (len(topic_rank) + 1, 0, "", folder.name)


def _read(folder: Path) -> dict[str, str]:
    texts = {}
    for name in PUBLIC_FILES:
        path = folder / name
        if not path.is_file():
            raise ContentError(_rel(folder, name), 1, "missing")
        try:
            texts[name] = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ContentError(_rel(folder, name), 1, "not valid UTF-8") from None
    followups = folder / FOLLOWUPS_FILE
    if followups.is_file():  # optional: an exercise without one has no follow-up to ask
        texts[FOLLOWUPS_FILE] = followups.read_text(encoding="utf-8")
    texts[SUITE_KEY] = json.dumps(_suite_record(folder), sort_keys=True)
    return texts


def _suite_record(folder: Path) -> dict[str, Any]:
    """What the learner is told of how the hidden tests were proven: counts and dates only
    (never a mutant or a test), from the mutation runner's record and the folder."""
    record: dict[str, Any] = {
        "authored": len(list(folder.glob("mutants/*.patch"))),
        "alternatives": len(list(folder.glob("alternatives/*.py"))),
    }
    path = folder / MUTATION_FILE
    if path.is_file():
        try:
            found = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            raise ContentError(_rel(folder, MUTATION_FILE), 1, "not valid JSON") from None
        for key in ("made", "killed", "equivalent", "score", "seeds", "proven"):
            if key in found:
                record[key] = found[key]
    return record


def _rel(folder: Path, name: str) -> str:
    return f"{EXERCISES_DIR}/{folder.name}/{name}"


def _fields(
    folder: Path, texts: dict[str, str], topics: set[str], items: set[str]
) -> dict[str, Any]:
    where = _rel(folder, "exercise.yml")
    try:
        meta: Any = _yaml(texts["exercise.yml"])
    except yaml.YAMLError as exc:
        raise ContentError(where, 1, f"YAML does not parse: {exc}") from None
    if not isinstance(meta, dict):
        raise ContentError(where, 1, "must be a mapping")
    if meta.get("slug") != folder.name:
        raise ContentError(where, 1, "slug must equal the folder's name")
    for key in ("title", "topic", "entry_point"):
        if not isinstance(meta.get(key), str) or not meta[key].strip():
            raise ContentError(where, 1, f"{key} must be text")
    if meta["topic"] not in topics:
        raise ContentError(where, 1, f"unknown topic '{meta['topic']}' (see decks.yml)")
    if meta.get("difficulty") not in EXERCISE_DIFFICULTIES:
        raise ContentError(where, 1, "difficulty must be easy, medium or hard")
    drilled = meta.get("items")
    if not isinstance(drilled, list) or not drilled:
        raise ContentError(where, 1, "items must list the Q&A items it drills")
    unknown = sorted(str(s) for s in drilled if s not in items)
    if unknown:
        raise ContentError(where, 1, f"items that do not exist: {unknown}")
    backends = meta.get("backends", list(BACKENDS))
    if not isinstance(backends, list) or not backends or not set(backends) <= set(BACKENDS):
        raise ContentError(where, 1, "backends is a list of cpu and cuda")
    forbidden = forbidden_section(meta.get("forbid"), meta.get("forbid_reason"), where)
    statement = texts["statement.md"]
    if forbidden:
        statement = statement.rstrip("\n") + "\n\n" + forbidden
    return dict(
        slug=folder.name,
        title=meta["title"],
        topic_slug=meta["topic"],
        difficulty=meta["difficulty"],
        items=",".join(drilled),
        entry_point=meta["entry_point"],
        statement_markdown=statement,
        statement_html=_focusable_code(render_markdown(statement).html),
        starter_code=texts["starter.py"],
        visible_tests=json.dumps(visible_tests(texts["tests.py"], _rel(folder, "tests.py"))),
        backends=",".join(b for b in BACKENDS if b in backends),
        followups=json.dumps(_followups(folder, texts.get(FOLLOWUPS_FILE))),
        suite_record=texts[SUITE_KEY],
    )


def _followups(folder: Path, text: str | None) -> list[dict[str, Any]]:
    """followups.yml: `followups`, a list of {prompt, key_points}."""
    if text is None:
        return []
    where = _rel(folder, FOLLOWUPS_FILE)
    try:
        data: Any = _yaml(text)
    except yaml.YAMLError as exc:
        raise ContentError(where, 1, f"YAML does not parse: {exc}") from None
    entries = data.get("followups") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not 1 <= len(entries) <= MAX_FOLLOWUPS:
        raise ContentError(where, 1, f"needs a list `followups` of 1 to {MAX_FOLLOWUPS}")
    low, high = KEY_POINTS_RANGE
    found = []
    for n, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict) or set(entry) != {"prompt", "key_points"}:
            raise ContentError(where, 1, f"follow-up {n} has a prompt and key_points, only")
        prompt, points = entry["prompt"], entry["key_points"]
        if not isinstance(prompt, str) or not prompt.strip():
            raise ContentError(where, 1, f"follow-up {n}: the prompt must be text")
        if (
            not isinstance(points, list)
            or not low <= len(points) <= high
            or not all(isinstance(p, str) and p.strip() for p in points)
        ):
            raise ContentError(where, 1, f"follow-up {n}: {low} to {high} key points, as text")
        found.append({"prompt": prompt.strip(), "key_points": [p.strip() for p in points]})
    return found


def _focusable_code(html: str) -> str:
    """The statement's code blocks stay read-only (no editor replaces them, as on an item's
    page), so each is made reachable from the keyboard: a phone scrolls them sideways."""
    return html.replace('<pre class="hl', '<pre tabindex="0" class="hl')
