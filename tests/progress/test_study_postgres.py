"""The progress writes (upserts, merges, cascades) on a real PostgreSQL server, the database
DATABASE_URL can switch to: the same services, the other dialect."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app import migrate
from app.accounts import merge
from app.domain import Identity
from app.library.catalogue import load_catalogue
from app.models import Activity, Deck, Item, ItemProgress, Learner, QuizPrompt, Topic, User
from app.platform import learners
from app.progress import study
from app.reader import dashboard

pytest_plugins = ["tests.support.postgres"]


def an_item(session: Session) -> Item:
    session.add(Deck(slug="deep-learning", title="Deep learning", description="", position=1))
    session.add(Topic(slug="foundations", title="Foundations", position=1))
    session.flush()  # the models declare no relationships: flush in the order of the keys
    item = Item(
        deck_slug="deep-learning",
        number=1,
        slug="one",
        title="One?",
        topic_slug="foundations",
        difficulty="beginner",
        body_markdown="",
        body_html="",
        body_text="",
        source_path="x.md",
        content_sha256="0" * 64,
    )
    session.add(item)
    session.flush()
    session.add(QuizPrompt(item_id=item.id, position=1, text="Why?"))
    session.flush()
    return item


def test_visits_checks_merges_and_deletion_on_postgresql(postgres_engine: Engine) -> None:
    migrate.upgrade(postgres_engine)
    with Session(postgres_engine) as session:
        item = an_item(session)
        user = User(username="pg", password_hash="x")
        session.add(user)
        session.flush()
        guest = learners.resolve_or_create(session, Identity(visitor="v1"))
        study.record_visit(guest, item)
        study.record_visit(guest, item)  # the upsert's update branch
        study.set_bookmark(guest, item, on=True)
        assert user.id is not None
        account = learners.resolve_or_create(session, Identity(visitor="v2", user_id=user.id))
        start = datetime(2026, 11, 2, tzinfo=UTC)
        for day in (start, start + timedelta(days=1)):
            study.record_check(account, item, prompt=1, knew=True, now=day)
        study.record_visit(account, item)
        session.commit()

        merge.carry_guest_into_account(session, visitor="v1", user_id=user.id)
        session.commit()
        (row,) = session.exec(select(ItemProgress)).all()
        assert (row.visits, row.bookmarked, row.status) == (3, True, "mastered")
        board = dashboard.dashboard(account, load_catalogue(session.connection()))
        assert board.totals["mastered"] == 1 and board.bookmarks[0].slug == "one"

        session.delete(user)
        session.commit()
        for model in (Learner, ItemProgress, Activity):
            assert session.exec(select(model)).all() == []
