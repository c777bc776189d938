"""Decks and topics, with how many items each holds."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import Connection, func
from sqlalchemy import select as core_select
from sqlmodel import col

from app.models import Deck, Item, Topic

LAB_DECK = "labs"  # the deck whose items are timing labs, "Labs" in the navigation


@dataclass(frozen=True, slots=True)
class Listing:
    """What a list of items is called: its heading, and the word for one item and many."""

    heading: str
    one: str
    many: str

    def count(self, n: int) -> str:
        return f"{n} {self.one if n == 1 else self.many}"


@dataclass(frozen=True, slots=True)
class DeckSummary:
    slug: str
    title: str
    description: str
    item_count: int


@dataclass(frozen=True, slots=True)
class TopicSummary:
    slug: str
    title: str


@dataclass(frozen=True)
class Catalogue:
    decks: list[DeckSummary]
    topics: list[TopicSummary]
    # Titles by slug: a list row asks for two of them.
    _titles: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        titles = {f"deck:{d.slug}": d.title for d in self.decks}
        titles.update({f"topic:{t.slug}": t.title for t in self.topics})
        object.__setattr__(self, "_titles", titles)

    def deck_title(self, slug: str) -> str:
        return self._titles.get(f"deck:{slug}", slug)

    def topic_title(self, slug: str) -> str:
        return self._titles.get(f"topic:{slug}", slug)

    def listing(self, deck: str | None) -> Listing:
        """The whole library, or one deck's page, titled for it; the labs deck is called
        Labs, as the navigation calls it, and counts labs."""
        if deck == LAB_DECK:
            return Listing("Labs", "lab", "labs")
        if deck is None:
            return Listing("Library", "question", "questions")
        return Listing(self.deck_title(deck), "question", "questions")


# Built once: every page of the library asks for these.
_DECK_COUNTS = core_select(col(Item.deck_slug), func.count()).group_by(col(Item.deck_slug))
_DECKS = core_select(col(Deck.slug), col(Deck.title), col(Deck.description)).order_by(
    col(Deck.position)
)
_USED_TOPICS = (
    core_select(col(Topic.slug), col(Topic.title))
    .where(col(Topic.slug).in_(core_select(col(Item.topic_slug)).distinct()))
    .order_by(col(Topic.position))
)


def load_catalogue(connection: Connection) -> Catalogue:
    """All decks (with item counts) and the topics that have at least one item."""
    counts: dict[str, int] = {slug: n for slug, n in connection.execute(_DECK_COUNTS)}
    decks = [
        DeckSummary(slug, title, description, counts.get(slug, 0))
        for slug, title, description in connection.execute(_DECKS)
    ]
    topics = [TopicSummary(slug, title) for slug, title in connection.execute(_USED_TOPICS)]
    return Catalogue(decks=decks, topics=topics)
