"""An exercise page's one statement (page_standing) says what the services' own reads say,
part by part, for a learner with something of every kind: a draft, two hints, a passing then
a failing Submit (a re-solving card, failing categories, both outcomes), a revealed solution
and a question due; and the page itself reads its learner's standing in that one statement."""

from __future__ import annotations

from datetime import timedelta

from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.domain import Identity
from app.exercises import hints, page_standing, review, solutions, submissions
from app.models import User, aware, utcnow
from app.platform import learners
from app.settings import Settings
from app.study import review as question_review
from tests.support.bank import add_model_answers
from tests.support.forms import csrf_token, form, sign_up
from tests.support.grading import scripted, submit
from tests.support.statements import statements

SLUG = "inverted-dropout"


def a_learner_with_everything(client: TestClient, engine: Engine) -> TestClient:
    add_model_answers(engine, "dropout")
    sign_up(client, "wren")
    form(client, f"/exercises/{SLUG}/draft", code="def dropout(x): ...")
    token = csrf_token(client, "/items/dropout")
    client.post("/items/dropout/open", data={"position": "1", "csrf_token": token})
    client = scripted(client)
    for _ in range(2):
        assert client.post(f"/api/exercises/{SLUG}/hints").status_code == 200
    submit(client, SLUG, "passes")
    submit(client, SLUG, "fail: gradients\nfail: edge cases")
    assert client.post(f"/api/exercises/{SLUG}/solution", json={}).status_code == 200
    return client


def test_one_statement_reads_what_each_part_reads_alone(
    client: TestClient, engine: Engine, settings: Settings
) -> None:
    a_learner_with_everything(client, engine)
    later = utcnow() + timedelta(hours=1)  # the open answer is due by then
    with Session(engine) as session:
        user = session.exec(select(User).where(User.username == "wren")).one()
        identity = Identity(visitor="v", user_id=user.id, username="wren")
        scope = learners.resolve(session, identity)
        assert scope is not None
        content = settings.content_dir
        hint_state = hints.state(scope, content, SLUG)
        standing = solutions.standing(scope, content, SLUG)
        latest = submissions.history(session, scope.learner_id, SLUG, limit=1)[0].run
        columns = ("id", "status", "grading_mode", "grading_verdict", "grading", "score", "stdout")
        latest_columns = {c: getattr(latest, c) for c in columns}
        expected = {
            "card_due": getattr(review.card_of(scope, SLUG), "due", None),
            "due": question_review.due_for(session.connection(), identity, now=later),
            "outcomes": solutions.submit_outcomes(session.connection(), scope.learner_id, SLUG),
        }
        session.commit()
    with engine.connect() as connection:
        found = page_standing.read(connection, identity, slug=SLUG, now=later)
        page = page_standing.for_page(
            connection, identity, slug=SLUG, content_dir=content, in_review=False, now=later
        )
    assert found.learner_id == scope.learner_id
    assert found.draft == "def dropout(x): ..."
    assert [h.index for h in hint_state.shown] == found.shown_hints and len(found.shown_hints) == 2
    assert found.failing == hint_state.failing == ["gradients", "edge cases"]
    assert (found.submit_failed, found.submit_passed) == expected["outcomes"] == (True, True)
    assert found.revealed_at is not None and standing.state == "revealed"
    assert found.due == expected["due"] == 1
    assert page is not None
    assert page.hints == hint_state
    assert page.solution == standing
    card_due = expected["card_due"]
    assert card_due is not None and found.card_due is not None
    assert aware(found.card_due) == aware(card_due)
    assert page.next_review == review.NextReview.of(card_due, later)
    assert page.latest_submission is not None
    assert {c: getattr(page.latest_submission, c) for c in columns} == latest_columns


def test_a_review_shows_no_draft_result_or_solution(
    client: TestClient, engine: Engine, settings: Settings
) -> None:
    a_learner_with_everything(client, engine)
    with Session(engine) as session:
        user = session.exec(select(User).where(User.username == "wren")).one()
        identity = Identity(visitor="v", user_id=user.id, username="wren")
    with engine.connect() as connection:
        page = page_standing.for_page(
            connection,
            identity,
            slug=SLUG,
            content_dir=settings.content_dir,
            in_review=True,
            now=utcnow(),
        )
    assert page is not None
    assert page.draft is None and page.latest_submission is None
    assert page.solution == solutions.Standing(None, "review", seen_before=True)


def test_someone_with_no_learner_has_an_empty_standing(engine: Engine) -> None:
    stranger = Identity(visitor="never-seen", user_id=None, username=None, known_browser=True)
    with engine.connect() as connection:
        found = page_standing.read(connection, stranger, slug=SLUG, now=utcnow())
    assert found == page_standing.ExerciseStanding()


def test_the_page_reads_its_learners_standing_in_one_statement(
    client: TestClient, engine: Engine
) -> None:
    client = a_learner_with_everything(client, engine)
    with statements(client.app.state.backprop.engine) as seen:  # type: ignore[attr-defined]
        page = client.get(f"/exercises/{SLUG}")
    assert page.status_code == 200
    assert "def dropout(x): ..." in page.text  # the draft in the editor
    # The session's look-up, the standing, and the revealed solution's last code: no more
    # (on PostgreSQL the clock is the database's, read once too).
    reads = [s for s in seen if "clock_timestamp" not in s]
    assert len(reads) == 3, "\n".join(s[:90] for s in reads)
    assert sum("union all" in s for s in seen) == 1
