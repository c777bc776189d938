"""Finding items: filter, search (ranked, with highlighted matches), one item, its neighbours."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from html import escape

from markupsafe import Markup
from sqlalchemy import text
from sqlmodel import Session, col, or_, select

from app.errors import InvalidFilter, ItemNotFound
from app.models import CodeSample, Deck, Item, QuizPrompt, Topic

MAX_QUERY_LENGTH = 200
MAX_QUERY_TERMS = 12
# Private-use characters mark matches inside SQLite's snippets; the text is HTML-escaped
# first and only then are the markers turned into <mark>, so content can never inject HTML.
_OPEN, _CLOSE = "\ue000", "\ue001"


class Difficulty(StrEnum):
    beginner = "beginner"
    intermediate = "intermediate"
    advanced = "advanced"


@dataclass(frozen=True)
class ItemFilter:
    """What the list shows: all filters optional."""

    deck: str | None = None
    topic: str | None = None
    difficulty: Difficulty | None = None
    q: str | None = None

    @property
    def active(self) -> bool:
        return any((self.deck, self.topic, self.difficulty, self.q))


@dataclass(frozen=True)
class ItemHit:
    """One row of the list, with search highlights when there was a query."""

    item: Item
    title_html: Markup
    snippet_html: Markup | None


@dataclass(frozen=True)
class ItemPage:
    """An item with everything its page shows."""

    item: Item
    deck: Deck
    topic: Topic
    samples: list[CodeSample]
    prompts: list[QuizPrompt]
    previous: Item | None
    next: Item | None


def search_terms(q: str | None) -> list[str]:
    """The words of a query, as FTS5 sees them; punctuation separates words."""
    return re.findall(r"\w+", q or "")[:MAX_QUERY_TERMS]


def list_items(session: Session, *, filters: ItemFilter) -> list[ItemHit]:
    """Items matching every filter: in deck order, or by relevance when there is a query."""
    _check_known(session, filters)
    statement = select(Item)
    if filters.deck:
        statement = statement.where(Item.deck_slug == filters.deck)
    if filters.topic:
        statement = statement.where(Item.topic_slug == filters.topic)
    if filters.difficulty:
        statement = statement.where(Item.difficulty == filters.difficulty.value)

    terms = search_terms(filters.q)
    if not terms:
        rows = session.exec(
            statement.join(Deck).order_by(col(Deck.position), col(Item.number))
        ).all()
        return [ItemHit(item=i, title_html=Markup(escape(i.title)), snippet_html=None) for i in rows]

    if session.get_bind().dialect.name == "sqlite":
        return _fts_search(session, statement, terms)
    return _like_search(session, statement, terms)


def _fts_search(session: Session, statement: object, terms: list[str]) -> list[ItemHit]:
    match = " ".join(f'"{t}"*' for t in terms)
    ranked = session.execute(
        text(
            "SELECT rowid, highlight(item_search, 0, :o, :c), "
            "snippet(item_search, -1, :o, :c, '…', 16) "
            "FROM item_search WHERE item_search MATCH :m "
            # Title matches weigh most, then the explanation, then code.
            "ORDER BY bm25(item_search, 10.0, 3.0, 1.0)"
        ),
        {"m": match, "o": _OPEN, "c": _CLOSE},
    ).all()
    if not ranked:
        return []
    allowed = {
        i.id: i
        for i in session.exec(
            statement.where(col(Item.id).in_([r[0] for r in ranked]))  # type: ignore[attr-defined]
        )
    }
    return [
        ItemHit(item=allowed[rowid], title_html=_marked(title), snippet_html=_marked(snippet))
        for rowid, title, snippet in ranked
        if rowid in allowed
    ]


def _like_search(session: Session, statement: object, terms: list[str]) -> list[ItemHit]:
    """Databases without FTS5: every term must occur in the title, prose or code."""
    for term in terms:
        pattern = f"%{term}%"
        statement = statement.where(  # type: ignore[attr-defined]
            or_(col(Item.title).ilike(pattern), col(Item.body_text).ilike(pattern))
        )
    rows = session.exec(statement.order_by(col(Item.deck_slug), col(Item.number))).all()  # type: ignore[attr-defined]
    return [_like_hit(i, terms) for i in rows]


def _like_hit(item: Item, terms: list[str]) -> ItemHit:
    pattern = re.compile("|".join(re.escape(t) for t in terms), re.IGNORECASE)

    def mark(s: str) -> Markup:
        return _marked(pattern.sub(lambda m: f"{_OPEN}{m.group(0)}{_CLOSE}", s))

    found = pattern.search(item.body_text)
    snippet = None
    if found:
        start = max(0, found.start() - 80)
        snippet = mark(("…" if start else "") + item.body_text[start : start + 200] + "…")
    return ItemHit(item=item, title_html=mark(item.title), snippet_html=snippet)


def _marked(s: str) -> Markup:
    return Markup(escape(s).replace(_OPEN, "<mark>").replace(_CLOSE, "</mark>"))


def _check_known(session: Session, filters: ItemFilter) -> None:
    if filters.deck and session.get(Deck, filters.deck) is None:
        raise InvalidFilter(f"There is no deck called '{filters.deck}'.")
    if filters.topic and session.get(Topic, filters.topic) is None:
        raise InvalidFilter(f"There is no topic called '{filters.topic}'.")


def get_item(session: Session, *, slug: str) -> Item:
    item = session.exec(select(Item).where(Item.slug == slug)).first()
    if item is None:
        raise ItemNotFound(slug)
    return item


def item_page(session: Session, *, slug: str) -> ItemPage:
    """An item, its samples and prompts, and the items before and after it in its deck."""
    item = get_item(session, slug=slug)
    samples = session.exec(
        select(CodeSample).where(CodeSample.item_id == item.id).order_by(col(CodeSample.index))
    ).all()
    prompts = session.exec(
        select(QuizPrompt).where(QuizPrompt.item_id == item.id).order_by(col(QuizPrompt.position))
    ).all()
    same_deck = select(Item).where(Item.deck_slug == item.deck_slug)
    previous = session.exec(
        same_deck.where(Item.number < item.number).order_by(col(Item.number).desc()).limit(1)
    ).first()
    following = session.exec(
        same_deck.where(Item.number > item.number).order_by(col(Item.number)).limit(1)
    ).first()
    deck = session.get(Deck, item.deck_slug)
    topic = session.get(Topic, item.topic_slug)
    assert deck is not None and topic is not None  # foreign keys guarantee both
    return ItemPage(
        item=item,
        deck=deck,
        topic=topic,
        samples=list(samples),
        prompts=list(prompts),
        previous=previous,
        next=following,
    )
