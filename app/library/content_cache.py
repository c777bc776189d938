"""Content changes only when it is imported, yet every library page reads the catalogue and
the item rows, and search-as-you-type repeats the same queries keystroke after keystroke.
This keeps them per engine, with the content's version (how many files were imported, and
when last; the exercises count as one file, app/importer/load.py) read again at most every
RECHECK_SECONDS: a server process sees an import made by another process within that time,
and one made by itself at once (`forget`)."""

from __future__ import annotations

import time
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from functools import cached_property
from weakref import WeakKeyDictionary

from markupsafe import Markup
from sqlalchemy import Connection, func
from sqlalchemy import select as core_select
from sqlalchemy.engine import Engine
from sqlmodel import col

from app.library import items
from app.library.catalogue import Catalogue, load_catalogue
from app.library.items import ItemDetail, ItemRow, all_rows
from app.library.query import Vocabulary
from app.models import CodeSample, ContentFile, Deck, Item, Topic

RECHECK_SECONDS = 2.0
MAX_CACHED_SEARCHES = 512
_VERSION = core_select(func.count(), func.max(col(ContentFile.imported_at)))
Ranked = list[tuple[int, Markup, Markup | None]]  # (item id, title, snippet) best first
ItemText = tuple[str, str, str]  # an item's title, prose, and code (its samples in order)


@dataclass
class Snapshot:
    """The content as of one import: its catalogue, its rows in deck order, and the answers
    to the searches made since."""

    version: tuple[object, ...]
    checked_at: float
    catalogue: Catalogue
    rows: list[ItemRow]
    deck_slugs: frozenset[str]
    topic_slugs: frozenset[str]  # every topic, used by an item or not
    searches: OrderedDict[str, Ranked] = field(default_factory=OrderedDict)

    measured_by: dict[str, list[ItemRow]] = field(default_factory=dict)
    words: Vocabulary | None = None  # made on the first search that needs it (vocabulary)
    # What other services work out once per import (e.g. the exercises of each item).
    derived: dict[str, object] = field(default_factory=dict)
    item_texts: dict[int, ItemText] | None = None  # read on the first search that needs it
    # Item pages' content (five queries each), by slug, kept as each is first read: the item
    # page is the one every reader opens, and its content changes only with an import.
    details: dict[str, ItemDetail] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for row in self.rows:
            for slug in row.measure_list:
                self.measured_by.setdefault(slug, []).append(row)

    @cached_property
    def counts(self) -> dict[str, Counter[str]]:
        """Items per deck, topic and difficulty: what the library's filter menus show."""
        return {
            "deck": Counter(row.deck_slug for row in self.rows),
            "topic": Counter(row.topic_slug for row in self.rows),
            "difficulty": Counter(str(row.difficulty) for row in self.rows),
        }

    def labs_measuring(self, slug: str) -> list[ItemRow]:
        """The labs that time the claims of the item `slug`."""
        return self.measured_by.get(slug, [])

    def cached_search(self, match: str) -> Ranked | None:
        found = self.searches.get(match)
        if found is not None:
            self.searches.move_to_end(match)
        return found

    def texts(self, connection: Connection) -> dict[int, ItemText]:
        """Every item's words by its id: read once per import, for the vocabulary and for
        searching where FTS5 is missing."""
        if self.item_texts is None:
            code: dict[int, list[str]] = {}
            samples = core_select(col(CodeSample.item_id), col(CodeSample.code)).order_by(
                col(CodeSample.item_id), col(CodeSample.index)
            )
            for item_id, sample in connection.execute(samples):
                code.setdefault(item_id, []).append(sample)
            items = connection.execute(
                core_select(col(Item.id), col(Item.title), col(Item.body_text))
            )
            self.item_texts = {
                item_id: (title, prose, "\n".join(code.get(item_id, [])))
                for item_id, title, prose in items
                if item_id is not None  # stored items have one
            }
        return self.item_texts

    def vocabulary(self, connection: Connection) -> Vocabulary:
        """The content's words, for correcting typos in queries; made once per import."""
        if self.words is None:
            self.words = Vocabulary.of("\n".join(text) for text in self.texts(connection).values())
        return self.words

    def keep_search(self, match: str, ranked: Ranked) -> None:
        self.searches[match] = ranked
        if len(self.searches) > MAX_CACHED_SEARCHES:
            self.searches.popitem(last=False)


_snapshots: WeakKeyDictionary[Engine, Snapshot] = WeakKeyDictionary()


def snapshot(connection: Connection) -> Snapshot:
    """The current content for this connection's database."""
    engine = connection.engine
    now = time.monotonic()
    known = _snapshots.get(engine)
    if known is not None and now - known.checked_at < RECHECK_SECONDS:
        return known
    version = tuple(connection.execute(_VERSION).one())
    if known is not None and known.version == version:
        known.checked_at = now
        return known
    fresh = Snapshot(
        version,
        now,
        load_catalogue(connection),
        all_rows(connection),
        frozenset(connection.execute(core_select(col(Deck.slug))).scalars()),
        frozenset(connection.execute(core_select(col(Topic.slug))).scalars()),
    )
    _snapshots[engine] = fresh
    return fresh


def item_detail(connection: Connection, slug: str) -> ItemDetail:
    """An item's page content (items.item_detail, without samples), kept until the next
    import. ItemNotFound for a slug that is none (never kept: any string can be asked)."""
    kept = snapshot(connection)
    found = kept.details.get(slug)
    if found is None:
        found = items.item_detail(connection, slug=slug)
        kept.details[slug] = found  # one per real item at most: a bounded set
    return found


def forget(engine: Engine) -> None:
    """Drop what is kept for `engine` (after this process imported content)."""
    _snapshots.pop(engine, None)
