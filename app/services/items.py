"""Finding items: filter, search (ranked, with highlighted matches), one item, its neighbours."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from html import escape

from markupsafe import Markup
from sqlalchemy import Connection, and_, bindparam, func, text
from sqlalchemy import select as core_select
from sqlalchemy.orm import aliased, defer
from sqlmodel import Session, col, or_, select
from sqlmodel.sql.expression import SelectOfScalar

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


@dataclass(frozen=True, slots=True)
class Named:
    """A deck or a topic as a page links it."""

    slug: str
    title: str


@dataclass(frozen=True, slots=True)
class ItemLink:
    """A neighbouring item as the pager links it."""

    slug: str
    number: int
    title: str


@dataclass(frozen=True, slots=True)
class ItemText:
    """The columns of an item that its HTML page shows."""

    id: int
    slug: str
    number: int
    title: str
    section: str | None
    difficulty: str
    tags: str
    body_html: str
    body_text: str

    @property
    def tag_list(self) -> list[str]:
        return [t for t in self.tags.split(",") if t]


@dataclass(frozen=True, slots=True)
class PromptText:
    """A quiz prompt as the page shows it (its position is what recall checks refer to)."""

    position: int
    text: str


@dataclass(frozen=True, slots=True)
class ItemDetail:
    """What the HTML item page shows, read as plain rows (see item_detail)."""

    item: ItemText
    deck: Named
    topic: Named
    prompts: list[PromptText]
    previous: ItemLink | None
    next: ItemLink | None


@dataclass(frozen=True)
class ItemPage:
    """An item with everything the JSON API shows of it, as ORM entities."""

    item: Item
    deck: Deck
    topic: Topic
    samples: list[CodeSample]
    prompts: list[QuizPrompt]
    previous: Item | None
    next: Item | None


def parse_difficulty(value: str | None) -> Difficulty | None:
    """A difficulty from a query string; a clear error for anything else."""
    if value is None:
        return None
    try:
        return Difficulty(value)
    except ValueError:
        choices = ", ".join(d.value for d in Difficulty)
        raise InvalidFilter(f"Difficulty must be one of {choices}, not '{value}'.") from None


def search_terms(q: str | None) -> list[str]:
    """The words of a query, as FTS5 sees them; punctuation separates words."""
    return re.findall(r"\w+", q or "")[:MAX_QUERY_TERMS]


def list_items(session: Session, *, filters: ItemFilter) -> list[ItemHit]:
    """Items matching every filter: in deck order, or by relevance when there is a query."""
    _check_known(session, filters)
    # A list row needs none of the big text columns; loading them made lists twice as slow.
    big_columns = ("body_html", "body_markdown", "body_text")
    statement = select(Item).options(*(defer(getattr(Item, c)) for c in big_columns))
    if filters.deck:
        statement = statement.where(Item.deck_slug == filters.deck)
    if filters.topic:
        statement = statement.where(Item.topic_slug == filters.topic)
    if filters.difficulty:
        statement = statement.where(Item.difficulty == filters.difficulty.value)

    terms = search_terms(filters.q)
    if filters.q and not terms:
        return []  # a query of punctuation or symbols alone matches nothing
    if not terms:
        rows = session.exec(
            statement.join(Deck).order_by(col(Deck.position), col(Item.number))
        ).all()
        return [
            ItemHit(item=i, title_html=Markup(escape(i.title)), snippet_html=None) for i in rows
        ]

    if session.get_bind().dialect.name == "sqlite":
        return _fts_search(session, statement, terms)
    return _like_search(session, statement, terms)


def _fts_search(
    session: Session, statement: SelectOfScalar[Item], terms: list[str]
) -> list[ItemHit]:
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
        i.id: i for i in session.exec(statement.where(col(Item.id).in_([r[0] for r in ranked])))
    }
    return [
        ItemHit(item=allowed[rowid], title_html=_marked(title), snippet_html=_marked(snippet))
        for rowid, title, snippet in ranked
        if rowid in allowed
    ]


def _like_search(
    session: Session, statement: SelectOfScalar[Item], terms: list[str]
) -> list[ItemHit]:
    """Databases without FTS5: every term must occur in the title, prose or code."""
    for term in terms:
        # \w+ terms may hold "_", a LIKE wildcard: match it literally.
        pattern = "%" + term.replace("\\", "\\\\").replace("_", "\\_") + "%"
        in_code = select(CodeSample.item_id).where(col(CodeSample.code).ilike(pattern, escape="\\"))
        statement = statement.where(
            or_(
                col(Item.title).ilike(pattern, escape="\\"),
                col(Item.body_text).ilike(pattern, escape="\\"),
                col(Item.id).in_(in_code),
            )
        )
    rows = session.exec(statement.order_by(col(Item.deck_slug), col(Item.number))).all()
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


# The item page is the hottest path: its statements are built once, with bound parameters,
# so each request only binds values (building them per call cost more than running them).
_other = aliased(Item)
_in_deck = col(_other.deck_slug) == bindparam("deck")
_ITEM_WITH_DECK_AND_TOPIC = (
    select(Item, Deck, Topic)
    .join(Deck, col(Deck.slug) == col(Item.deck_slug))
    .join(Topic, col(Topic.slug) == col(Item.topic_slug))
    .where(col(Item.slug) == bindparam("slug"))
)
_PROMPTS = (
    select(QuizPrompt)
    .where(col(QuizPrompt.item_id) == bindparam("item_id"))
    .order_by(col(QuizPrompt.position))
)
_IS_NEIGHBOUR = and_(
    col(Item.deck_slug) == bindparam("deck"),
    or_(
        col(Item.number)
        == select(func.max(_other.number))
        .where(_in_deck, col(_other.number) < bindparam("number"))
        .scalar_subquery(),
        col(Item.number)
        == select(func.min(_other.number))
        .where(_in_deck, col(_other.number) > bindparam("number"))
        .scalar_subquery(),
    ),
)
_NEIGHBOURS = select(Item).where(_IS_NEIGHBOUR)
_SAMPLES = (
    select(CodeSample)
    .where(col(CodeSample.item_id) == bindparam("item_id"))
    .order_by(col(CodeSample.index))
)


def item_page(session: Session, *, slug: str, with_samples: bool = False) -> ItemPage:
    """An item with its deck, topic, prompts and neighbours in three queries; its samples
    too when asked (the page shows them from the HTML rendered at import)."""
    row = session.exec(_ITEM_WITH_DECK_AND_TOPIC, params={"slug": slug}).first()
    if row is None:
        raise ItemNotFound(slug)
    item, deck, topic = row
    prompts = session.exec(_PROMPTS, params={"item_id": item.id}).all()
    neighbours = session.exec(
        _NEIGHBOURS, params={"deck": item.deck_slug, "number": item.number}
    ).all()
    samples = session.exec(_SAMPLES, params={"item_id": item.id}).all() if with_samples else []
    return ItemPage(
        item=item,
        deck=deck,
        topic=topic,
        samples=list(samples),
        prompts=list(prompts),
        previous=next((n for n in neighbours if n.number < item.number), None),
        next=next((n for n in neighbours if n.number > item.number), None),
    )


# The HTML item page reads plain rows instead of ORM entities: building Item, Deck, Topic and
# QuizPrompt instances (identity map, instrumentation, three ORM executions) took about
# 300 µs of a request, the same SQL as plain rows about 80 µs (bench/http_load.py).
_DETAIL = (
    core_select(
        col(Item.id),
        col(Item.slug),
        col(Item.number),
        col(Item.title),
        col(Item.section),
        col(Item.difficulty),
        col(Item.tags),
        col(Item.body_html),
        col(Item.body_text),
        col(Item.deck_slug),
        col(Deck.title).label("deck_title"),
        col(Topic.slug).label("topic_slug"),
        col(Topic.title).label("topic_title"),
    )
    .join(Deck, col(Deck.slug) == col(Item.deck_slug))
    .join(Topic, col(Topic.slug) == col(Item.topic_slug))
    .where(col(Item.slug) == bindparam("slug"))
)
_PROMPT_TEXTS = (
    core_select(col(QuizPrompt.position), col(QuizPrompt.text))
    .where(col(QuizPrompt.item_id) == bindparam("item_id"))
    .order_by(col(QuizPrompt.position))
)
_NEIGHBOUR_LINKS = core_select(col(Item.slug), col(Item.number), col(Item.title)).where(
    _IS_NEIGHBOUR
)


def item_detail(connection: Connection, *, slug: str) -> ItemDetail:
    """The item page's data, in the three queries of item_page, as plain rows."""
    row = connection.execute(_DETAIL, {"slug": slug}).first()
    if row is None:
        raise ItemNotFound(slug)
    item = ItemText(*row[:9])  # type: ignore[arg-type]  # the first nine columns, in order; id is set
    number = item.number
    prompts = [PromptText(*p) for p in connection.execute(_PROMPT_TEXTS, {"item_id": item.id})]
    links = [
        ItemLink(*link)
        for link in connection.execute(_NEIGHBOUR_LINKS, {"deck": row.deck_slug, "number": number})
    ]
    return ItemDetail(
        item=item,
        deck=Named(row.deck_slug, row.deck_title),
        topic=Named(row.topic_slug, row.topic_title),
        prompts=prompts,
        previous=next((n for n in links if n.number < number), None),
        next=next((n for n in links if n.number > number), None),
    )
