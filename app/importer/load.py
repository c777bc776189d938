"""Bring the database in step with the content folder in one transaction.

Unchanged files (same SHA-256 as at their last import) are skipped; a bad file stops the
whole import before anything is written. Items keep their database id across edits, so
whatever is attached to an item later (a user's progress) survives a content update."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import delete, text
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.importer.errors import ContentError
from app.importer.exercises import EXERCISES_DIR, sync_exercises
from app.importer.parse import Catalogue, ParsedItem, parse_catalogue, parse_item
from app.importer.questions import (
    QUESTIONS_SUFFIX,
    parse_questions,
    questions_path,
    write_questions,
)
from app.importer.render import RENDER_VERSION, highlight_code, render_markdown
from app.models import CodeSample, ContentFile, Deck, Exercise, Item, QuizPrompt, Topic

log = logging.getLogger(__name__)

CATALOGUE_FILE = "decks.yml"
# The exercises' row among the content files: it changes whenever an import changes an
# exercise, so that the content's version (app/library/content_cache.py) follows the
# exercises too, and a server sees an import made by another process.
EXERCISES_FILE = f"{EXERCISES_DIR}/"


@dataclass
class ImportReport:
    """What one import did."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    exercises: list[str] = field(default_factory=list)  # exercise folders added, changed, gone

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed or self.exercises)

    def summary(self) -> str:
        return (
            f"{len(self.added)} added, {len(self.updated)} updated, "
            f"{len(self.removed)} removed, {self.unchanged} unchanged"
        )


def _content_files(content_dir: Path) -> dict[str, Path]:
    """Every file the importer reads, by path relative to the content folder."""
    catalogue = content_dir / CATALOGUE_FILE
    if not catalogue.is_file():
        raise ContentError(CATALOGUE_FILE, 1, f"missing: {catalogue}")
    files = {CATALOGUE_FILE: catalogue}
    for path in sorted(content_dir.glob("*/*.md")):
        files[path.relative_to(content_dir).as_posix()] = path
    for path in sorted(content_dir.glob(f"*/*{QUESTIONS_SUFFIX}")):
        files[path.relative_to(content_dir).as_posix()] = path
    return files


def import_content(engine: Engine, content_dir: Path) -> ImportReport:
    """Import new and changed files, remove items whose file is gone, then bring the
    exercises in step (they link to items, so items come first); each all or nothing."""
    report = _import_items(engine, content_dir)
    with Session(engine) as session:
        added, updated, removed = sync_exercises(session, content_dir)
        if added or updated or removed:
            session.merge(ContentFile(path=EXERCISES_FILE, sha256=_exercises_digest(session)))
        session.commit()
    report.exercises = [f"{EXERCISES_DIR}/{slug}" for slug in (*added, *updated, *removed)]
    if report.exercises:
        counts = (len(added), len(updated), len(removed))
        log.info("exercises: %d added, %d updated, %d removed", *counts)
    return report


def _exercises_digest(session: Session) -> str:
    """One digest of every exercise as imported: its slug, place and content."""
    session.flush()
    rows = session.exec(select(Exercise.slug, Exercise.position, Exercise.content_sha256))
    return hashlib.sha256(repr(sorted(rows)).encode()).hexdigest()


def _import_items(engine: Engine, content_dir: Path) -> ImportReport:
    files = _content_files(content_dir)
    raw = {rel: path.read_bytes() for rel, path in files.items()}
    digests = {
        rel: hashlib.sha256(RENDER_VERSION.encode() + b"\0" + data).hexdigest()
        for rel, data in raw.items()
    }
    report = ImportReport()

    with Session(engine) as session:
        known = {
            cf.path: cf.sha256
            for cf in session.exec(select(ContentFile))
            if cf.path != EXERCISES_FILE
        }
        changed = sorted(rel for rel, digest in digests.items() if known.get(rel) != digest)
        if CATALOGUE_FILE in changed:
            # Decks or topics changed: every item must be checked against them again.
            changed = sorted(digests)
        # An item and its questions are imported together: a change to either re-imports both.
        changed = sorted(set(changed) | _items_of_questions(changed, digests))
        removed = sorted(set(known) - set(digests))
        report.unchanged = len(digests) - len(changed)
        if not changed and not removed:
            return report

        catalogue = parse_catalogue(files[CATALOGUE_FILE], CATALOGUE_FILE)
        parsed = [_parse(raw, rel, catalogue) for rel in changed if rel.endswith(".md")]
        _check_unique(session, parsed, untouched=set(digests) - set(changed))

        _sync_catalogue(session, catalogue)
        existing = {item.slug: item for item in session.exec(select(Item))}
        untouched = set(digests) - set(changed)
        keep = {spec.slug for spec in parsed} | {
            slug for slug, item in existing.items() if item.source_path in untouched
        }
        # Items no file claims any more (deleted, or renamed to a new slug) go.
        for slug, stale in existing.items():
            if slug not in keep:
                _delete_item(session, stale)
                report.removed.append(stale.source_path)
        # Park the numbers of items about to change so that two items may swap places.
        for spec in parsed:
            moving = existing.get(spec.slug)
            if moving is not None and moving.id is not None:
                moving.number = -moving.id
                session.add(moving)
        session.flush()
        for spec in parsed:
            (report.updated if spec.slug in existing else report.added).append(spec.path)
            _write_item(session, spec, digests[spec.path], existing.get(spec.slug))
        for rel in removed:
            session.exec(delete(ContentFile).where(ContentFile.path == rel))  # type: ignore[arg-type]
        _drop_unlisted(session, catalogue)
        for rel in changed:
            session.merge(ContentFile(path=rel, sha256=digests[rel]))
        session.commit()

    log.info("content import: %s", report.summary())
    return report


def _items_of_questions(changed: list[str], digests: dict[str, str]) -> set[str]:
    """The item files whose questions file is among `changed`."""
    items = {rel.removesuffix(QUESTIONS_SUFFIX) + ".md" for rel in changed}
    return {rel for rel in items if rel in digests}


def _decoded(data: bytes, rel: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ContentError(rel, line, "not valid UTF-8") from None


def _parse(raw: dict[str, bytes], rel: str, catalogue: Catalogue) -> ParsedItem:
    """An item file, with the questions of the file beside it when there is one."""
    item = parse_item(_decoded(raw[rel], rel), rel, catalogue)
    beside = questions_path(rel)
    if beside in raw:
        text_ = _decoded(raw[beside], beside)
        item.questions = parse_questions(text_, beside, slug=item.slug, prompts=item.quiz_prompts)
    return item


def _check_unique(session: Session, parsed: list[ParsedItem], untouched: set[str]) -> None:
    """Slugs are unique everywhere and numbers unique within a deck, new and old files alike."""
    slugs: dict[str, str] = {}
    numbers: dict[tuple[str, int], str] = {}
    for item in session.exec(select(Item)):
        if item.source_path in untouched:
            slugs[item.slug] = item.source_path
            numbers[(item.deck_slug, item.number)] = item.source_path
    for spec in parsed:
        other = slugs.get(spec.slug)
        if other:
            raise ContentError(spec.path, 1, f"slug '{spec.slug}' is already used by {other}")
        other = numbers.get((spec.deck, spec.number))
        if other:
            raise ContentError(spec.path, 1, f"number {spec.number} is already used by {other}")
        slugs[spec.slug] = spec.path
        numbers[(spec.deck, spec.number)] = spec.path


def _sync_catalogue(session: Session, catalogue: Catalogue) -> None:
    for position, d in enumerate(catalogue.decks):
        session.merge(
            Deck(slug=d.slug, title=d.title, description=d.description, position=position)
        )
    for position, t in enumerate(catalogue.topics):
        session.merge(Topic(slug=t.slug, title=t.title, position=position))
    session.flush()


def _drop_unlisted(session: Session, catalogue: Catalogue) -> None:
    """Decks and topics no longer in decks.yml go (their items were checked already)."""
    session.flush()
    decks = [d.slug for d in catalogue.decks]
    topics = [t.slug for t in catalogue.topics]
    session.exec(delete(Deck).where(col(Deck.slug).not_in(decks)))
    session.exec(delete(Topic).where(col(Topic.slug).not_in(topics)))


def _write_item(session: Session, spec: ParsedItem, digest: str, item: Item | None) -> None:
    rendered = render_markdown(spec.body)
    fields: dict[str, Any] = dict(
        deck_slug=spec.deck,
        number=spec.number,
        slug=spec.slug,
        title=spec.title,
        topic_slug=spec.topic,
        difficulty=spec.difficulty,
        tags=",".join(spec.tags),
        section=spec.section,
        source=spec.source,
        body_markdown=spec.body,
        body_html=rendered.html,
        body_text=rendered.text,
        source_path=spec.path,
        content_sha256=digest,
        measures=",".join(spec.measures),
    )
    if item is None:
        item = Item(**fields)
    else:
        for key, value in fields.items():
            setattr(item, key, value)
        session.exec(delete(CodeSample).where(CodeSample.item_id == item.id))  # type: ignore[arg-type]
        session.exec(delete(QuizPrompt).where(QuizPrompt.item_id == item.id))  # type: ignore[arg-type]
    session.add(item)
    session.flush()
    assert item.id is not None
    for s in spec.samples:
        session.add(
            CodeSample(
                item_id=item.id,
                index=s.index,
                code=s.code,
                requires=",".join(s.requires),
                variant_of=s.variant_of,
            )
        )
    for position, prompt in enumerate(spec.quiz_prompts, start=1):
        session.add(QuizPrompt(item_id=item.id, position=position, text=prompt))
    write_questions(session, item.id, spec.questions, highlight=highlight_code)
    _index(session, item, "\n\n".join(s.code for s in spec.samples))


def _delete_item(session: Session, item: Item) -> None:
    session.exec(delete(CodeSample).where(CodeSample.item_id == item.id))  # type: ignore[arg-type]
    session.exec(delete(QuizPrompt).where(QuizPrompt.item_id == item.id))  # type: ignore[arg-type]
    _unindex(session, item)
    session.delete(item)
    session.flush()


def _has_fts(session: Session) -> bool:
    return session.get_bind().dialect.name == "sqlite"


def _index(session: Session, item: Item, code: str) -> None:
    if not _has_fts(session):
        return
    _unindex(session, item)
    session.execute(
        text("INSERT INTO item_search(rowid, title, body, code) VALUES (:id, :t, :b, :c)"),
        {"id": item.id, "t": item.title, "b": item.body_text, "c": code},
    )


def _unindex(session: Session, item: Item) -> None:
    if _has_fts(session):
        session.execute(text("DELETE FROM item_search WHERE rowid = :id"), {"id": item.id})
