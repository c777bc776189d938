"""Decks and topics, with how many items each holds."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func
from sqlmodel import Session, col, select

from app.models import Deck, Item, Topic


@dataclass(frozen=True)
class DeckSummary:
    slug: str
    title: str
    description: str
    item_count: int


@dataclass(frozen=True)
class Catalogue:
    decks: list[DeckSummary]
    topics: list[Topic]

    def deck_title(self, slug: str) -> str:
        return next((d.title for d in self.decks if d.slug == slug), slug)

    def topic_title(self, slug: str) -> str:
        return next((t.title for t in self.topics if t.slug == slug), slug)


# Built once: every page of the library asks for these.
_DECK_COUNTS = select(Item.deck_slug, func.count()).group_by(col(Item.deck_slug))
_DECKS = select(Deck).order_by(col(Deck.position))
_USED_TOPICS = (
    select(Topic)
    .where(col(Topic.slug).in_(select(Item.topic_slug).distinct()))
    .order_by(col(Topic.position))
)


def load_catalogue(session: Session) -> Catalogue:
    """All decks (with item counts) and the topics that have at least one item."""
    counts = dict(session.exec(_DECK_COUNTS).all())
    decks = [
        DeckSummary(d.slug, d.title, d.description, counts.get(d.slug, 0))
        for d in session.exec(_DECKS)
    ]
    return Catalogue(decks=decks, topics=list(session.exec(_USED_TOPICS)))
