"""Reading items: the list with its filters, one item with everything its page or the API
shows, and the small key the progress actions need. One read model, as plain rows: content
is read on every page view, and ORM entities cost several times the SQL (bench/)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup
from sqlalchemy import Connection, and_, bindparam, func, or_
from sqlalchemy import select as core_select
from sqlalchemy.orm import aliased
from sqlmodel import col

from app.domain import Difficulty, InvalidFilter, ItemNotFound
from app.models import CodeSample, Deck, Item, Question, QuizPrompt, Topic


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


@dataclass(frozen=True, slots=True)
class ItemRow:
    """An item as lists show it, and what every other view of it starts from."""

    id: int
    deck_slug: str
    number: int
    slug: str
    title: str
    topic_slug: str
    difficulty: str
    tags: str  # comma-separated
    section: str | None
    measures: str = ""  # a lab: the slugs of the items whose claims it times

    @property
    def measure_list(self) -> list[str]:
        return [m for m in self.measures.split(",") if m]

    @property
    def tag_list(self) -> list[str]:
        return [t for t in self.tags.split(",") if t]


@dataclass(frozen=True, slots=True)
class ItemHit:
    """One row of the list, with search highlights when there was a query."""

    item: ItemRow
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
class PromptText:
    """A quiz prompt (its position is what recall checks refer to)."""

    position: int
    text: str


@dataclass(frozen=True, slots=True)
class ModelAnswer:
    """What a prompt's answer should hold, for open-answer practice."""

    position: int
    answer: str
    key_points: list[str]
    code_html: str = ""  # the code shown with the prompt, highlighted


@dataclass(frozen=True, slots=True)
class SampleText:
    """A code sample; `requires` lists what it needs beyond a CPU and torch."""

    index: int
    code: str
    requires: str  # comma-separated Requirement values
    variant_of: int | None

    @property
    def requires_list(self) -> list[str]:
        return [r for r in self.requires.split(",") if r]


@dataclass(frozen=True, slots=True)
class ItemDetail:
    """One item with everything its page and the API show (samples only when asked)."""

    item: ItemRow
    body_html: str
    body_text: str
    body_markdown: str
    deck: Named
    topic: Named
    prompts: list[PromptText]
    samples: list[SampleText]
    answers: dict[int, ModelAnswer]  # by prompt position, for the prompts that have one
    previous: ItemLink | None
    next: ItemLink | None


# Statements are built once, with bound parameters, so each request only binds values
# (building them per call cost more than running them).
ROW_COLUMNS = (
    col(Item.id),
    col(Item.deck_slug),
    col(Item.number),
    col(Item.slug),
    col(Item.title),
    col(Item.topic_slug),
    col(Item.difficulty),
    col(Item.tags),
    col(Item.section),
    col(Item.measures),
)
_LIST = core_select(*ROW_COLUMNS).join(Deck).order_by(col(Deck.position), col(Item.number))
_ROW_BY_SLUG = core_select(*ROW_COLUMNS).where(col(Item.slug) == bindparam("slug"))
_DETAIL = (
    core_select(
        *ROW_COLUMNS,
        col(Item.body_html),
        col(Item.body_text),
        col(Item.body_markdown),
        col(Deck.title).label("deck_title"),
        col(Topic.title).label("topic_title"),
    )
    .join(Deck, col(Deck.slug) == col(Item.deck_slug))
    .join(Topic, col(Topic.slug) == col(Item.topic_slug))
    .where(col(Item.slug) == bindparam("slug"))
)
_PROMPTS = (
    core_select(col(QuizPrompt.position), col(QuizPrompt.text))
    .where(col(QuizPrompt.item_id) == bindparam("item_id"))
    .order_by(col(QuizPrompt.position))
)
_SAMPLES = (
    core_select(
        col(CodeSample.index),
        col(CodeSample.code),
        col(CodeSample.requires),
        col(CodeSample.variant_of),
    )
    .where(col(CodeSample.item_id) == bindparam("item_id"))
    .order_by(col(CodeSample.index))
)
_ANSWERS = (
    core_select(
        col(Question.position),
        col(Question.model_answer),
        col(Question.key_points),
        col(Question.code_html),
    )
    .where(col(Question.item_id) == bindparam("item_id"))
    .order_by(col(Question.position))
)
_other = aliased(Item)
_in_deck = col(_other.deck_slug) == bindparam("deck")
_NEIGHBOURS = core_select(col(Item.slug), col(Item.number), col(Item.title)).where(
    and_(
        col(Item.deck_slug) == bindparam("deck"),
        or_(
            col(Item.number)
            == core_select(func.max(_other.number))
            .where(_in_deck, col(_other.number) < bindparam("number"))
            .scalar_subquery(),
            col(Item.number)
            == core_select(func.min(_other.number))
            .where(_in_deck, col(_other.number) > bindparam("number"))
            .scalar_subquery(),
        ),
    )
)


def _item_row(columns: Any) -> ItemRow:
    """A row of ROW_COLUMNS as an ItemRow (a stored item always has its id)."""
    return ItemRow(*columns)


def parse_difficulty(value: str | None) -> Difficulty | None:
    """A difficulty from a query string; a clear error for anything else."""
    if value is None:
        return None
    try:
        return Difficulty(value)
    except ValueError:
        choices = ", ".join(d.value for d in Difficulty)
        raise InvalidFilter(f"Difficulty must be one of {choices}, not '{value}'.") from None


def all_rows(connection: Connection) -> list[ItemRow]:
    """Every item in deck order."""
    return [_item_row(row) for row in connection.execute(_LIST)]


def filtered(rows: Sequence[ItemRow], filters: ItemFilter) -> list[ItemRow]:
    """The rows that match the deck, topic and difficulty filters (the query aside)."""
    return [
        r
        for r in rows
        if (not filters.deck or r.deck_slug == filters.deck)
        and (not filters.topic or r.topic_slug == filters.topic)
        and (not filters.difficulty or r.difficulty == filters.difficulty.value)
    ]


def item_row(connection: Connection, *, slug: str) -> ItemRow:
    row = connection.execute(_ROW_BY_SLUG, {"slug": slug}).first()
    if row is None:
        raise ItemNotFound(slug)
    return _item_row(row)


def prompts_of(connection: Connection, item_id: int) -> list[PromptText]:
    return [PromptText(*p) for p in connection.execute(_PROMPTS, {"item_id": item_id})]


def answers_of(connection: Connection, item_id: int) -> dict[int, ModelAnswer]:
    """The model answers of an item's prompts, by prompt position."""
    return {
        position: ModelAnswer(position, answer, [p for p in points.split("\n") if p], code_html)
        for position, answer, points, code_html in connection.execute(
            _ANSWERS, {"item_id": item_id}
        )
    }


def item_detail(connection: Connection, *, slug: str, with_samples: bool = False) -> ItemDetail:
    """The item with its deck, topic, prompts and neighbours; its samples too when asked
    (the page shows them from the HTML rendered at import)."""
    row = connection.execute(_DETAIL, {"slug": slug}).first()
    if row is None:
        raise ItemNotFound(slug)
    item = _item_row(row[: len(ROW_COLUMNS)])
    number = item.number
    links = [
        ItemLink(*link)
        for link in connection.execute(_NEIGHBOURS, {"deck": item.deck_slug, "number": number})
    ]
    samples = (
        [SampleText(*s) for s in connection.execute(_SAMPLES, {"item_id": item.id})]
        if with_samples
        else []
    )
    return ItemDetail(
        item=item,
        body_html=row.body_html,
        body_text=row.body_text,
        body_markdown=row.body_markdown,
        deck=Named(item.deck_slug, row.deck_title),
        topic=Named(item.topic_slug, row.topic_title),
        prompts=prompts_of(connection, item.id),
        samples=samples,
        answers=answers_of(connection, item.id),
        previous=next((n for n in links if n.number < number), None),
        next=next((n for n in links if n.number > number), None),
    )
