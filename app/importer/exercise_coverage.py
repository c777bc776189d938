"""Which Q&A items the code exercises drill, and why the few without one have none: the table
in content/README.md ("Exercises by item"), written by `backprop exercise-coverage
--write-readme` and held current by a test.

An item with nothing to write (a comparison of frameworks, say) is listed in
`items_without_exercises.yml` with the reason, which its page shows in place of the
exercises. Every other item of the interview decks has at least one exercise."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from app.importer.errors import ContentError
from app.importer.parse import parse_catalogue, parse_item
from app.importer.readme_section import with_section

WITHOUT_FILE = "items_without_exercises.yml"
# The decks of interview questions; the labs and the torch.compile deck time and explain code
# rather than ask for it.
DRILLED_DECKS = ("deep-learning", "pytorch-essentials")
README_START = "<!-- exercise-coverage:start (backprop exercise-coverage --write-readme) -->"
README_END = "<!-- exercise-coverage:end -->"


@dataclass(frozen=True)
class Coverage:
    deck: str
    number: int
    slug: str
    title: str
    exercises: tuple[str, ...]  # the slugs of the exercises that drill it, in slug order
    without: str | None  # why it has none, from WITHOUT_FILE


def read_without(path: Path) -> dict[str, str]:
    """item slug → why it has no exercise. ContentError for a file that is not such a map."""
    if not path.is_file():
        return {}
    found = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(found, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in found.items()
    ):
        raise ContentError(WITHOUT_FILE, 1, "expected a map of item slug to a non-empty reason")
    return {k: " ".join(v.split()) for k, v in found.items()}


@lru_cache(maxsize=8)
def _without_at(path: Path, mtime_ns: int) -> dict[str, str]:
    return read_without(path)


def nothing_to_write(content_dir: Path, item_slug: str) -> str | None:
    """Why an item has no exercise, when WITHOUT_FILE says so; read again only when the file
    changes (one stat per item page)."""
    path = content_dir / WITHOUT_FILE
    try:
        mtime = path.stat().st_mtime_ns
    except FileNotFoundError:
        return None
    return _without_at(path, mtime).get(item_slug)


def load_coverage(content_dir: Path) -> list[Coverage]:
    """Every item of the interview decks with its exercises, in deck and item order."""
    catalogue = parse_catalogue(content_dir / "decks.yml", "decks.yml")
    drills: dict[str, list[str]] = {}
    for meta_path in sorted((content_dir / "exercises").glob("*/exercise.yml")):
        meta = yaml.safe_load(meta_path.read_text(encoding="utf-8")) or {}
        for item in meta.get("items") or []:
            drills.setdefault(str(item), []).append(meta_path.parent.name)
    without = read_without(content_dir / WITHOUT_FILE)
    found = []
    for deck in DRILLED_DECKS:
        for path in sorted((content_dir / deck).glob("*.md")):
            item = parse_item(path.read_text(encoding="utf-8"), f"{deck}/{path.name}", catalogue)
            found.append(
                Coverage(
                    deck=deck,
                    number=item.number,
                    slug=item.slug,
                    title=item.title,
                    exercises=tuple(sorted(drills.get(item.slug, []))),
                    without=without.get(item.slug),
                )
            )
    return found


def problems(coverage: list[Coverage], without: dict[str, str]) -> list[str]:
    """What breaks the rule: an item with neither an exercise nor a reason, one with both, a
    reason for no item."""
    slugs = {c.slug for c in coverage}
    found = [
        f"{c.slug}: no exercise and no reason"
        for c in coverage
        if not c.exercises and not c.without
    ]
    found += [
        f"{c.slug}: has exercises yet is listed in {WITHOUT_FILE}"
        for c in coverage
        if c.exercises and c.without
    ]
    found += [
        f"{slug}: listed in {WITHOUT_FILE} but no such item"
        for slug in sorted(set(without) - slugs)
    ]
    return found


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table_markdown(coverage: list[Coverage]) -> str:
    deck_titles = {"deep-learning": "DL", "pytorch-essentials": "PE"}
    drilled = sum(1 for c in coverage if c.exercises)
    reasoned = sum(1 for c in coverage if not c.exercises and c.without)
    summary = (
        f"{drilled} of {len(coverage)} items have at least one exercise; {reasoned} "
        f"{'has' if reasoned == 1 else 'have'} nothing to write, for the reason given"
    )
    missing = len(coverage) - drilled - reasoned
    lines = [
        summary + (f"; {missing} have none yet." if missing else "."),
        "",
        "| item | question | exercises |",
        "|---|---|---|",
    ]
    for c in coverage:
        drills = ", ".join(f"`{slug}`" for slug in c.exercises)
        shown = drills or f"none: {c.without or 'no reason given'}"
        lines.append(
            f"| {deck_titles[c.deck]} {c.number:02d} | {_cell(c.title)} | {_cell(shown)} |"
        )
    return "\n".join(lines)


def with_table(readme: str, table: str, *, where: str = "content/README.md") -> str:
    return with_section(readme, table, start=README_START, end=README_END, where=where)
