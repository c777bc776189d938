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


def load_catalogue(session: Session) -> Catalogue:
    """All decks (with item counts) and the topics that have at least one item."""
    counts = dict(
        session.exec(select(Item.deck_slug, func.count()).group_by(col(Item.deck_slug))).all()
    )
    decks = [
        DeckSummary(d.slug, d.title, d.description, counts.get(d.slug, 0))
        for d in session.exec(select(Deck).order_by(col(Deck.position)))
    ]
    used = set(session.exec(select(Item.topic_slug).distinct()).all())
    topics = [
        t for t in session.exec(select(Topic).order_by(col(Topic.position))) if t.slug in used
    ]
    return Catalogue(decks=decks, topics=topics)
