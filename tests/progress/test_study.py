"""Progress: the status rules, streak and calendar, what pages record, the dashboard and
GET /api/me/progress agreeing, and the list's progress filter."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.domain import Identity
from app.main import create_app
from app.models import Item
from app.platform import learners
from app.progress import study
from app.settings import RunQueueKind, Settings
from tests.support.forms import csrf_token, form, sign_up

# Recording, through the pages


def test_opening_an_item_marks_it_seen_and_counts_the_day(client: TestClient) -> None:
    sign_up(client, "amy")
    page = client.get("/items/dropout").text
    assert "status-seen" in page and "Seen" in page
    progress = client.get("/api/me/progress").json()
    assert progress["status_counts"]["seen"] == 1
    assert progress["activity"][0]["views"] == 1 and progress["streak_days"] == 0  # reading only
    assert progress["continue"]["slug"] == "dropout"


def test_repeat_visits_show_at_once_and_are_counted_everywhere(client: TestClient) -> None:
    sign_up(client, "rita")
    client.get("/items/dropout")  # the first visit is written before the page answers
    for n in (2, 3):  # returns are written moments later; the page counts them already
        assert f"Opened {n} times" in client.get("/items/dropout").text
    progress = client.get("/api/me/progress").json()  # the reader's own data includes them
    assert progress["activity"][0]["views"] == 3
    exported = client.get("/account/export").json()
    assert [i["visits"] for i in exported["progress"] if i["item"] == "dropout"] == [3]


def test_a_browsers_first_visit_counts_once_its_page_has_loaded(client: TestClient) -> None:
    first = client.get("/items/dropout").text  # no cookie yet: nothing recorded by the GET
    assert 'hx-post="/items/dropout/visit"' in first and "Not yet seen" in first
    token = re.search(r'<meta name="csrf-token" content="([^"]+)">', first).group(1)  # type: ignore[union-attr]
    status = client.post(
        "/items/dropout/visit", headers={"X-CSRF-Token": token, "HX-Request": "true"}
    )
    assert status.status_code == 200 and "status-seen" in status.text
    assert "Opened 1 time," in status.text
    # Only the pill and the note, out of band: a bookmark pressed before this answer stays.
    assert status.text.count('hx-swap-oob="outerHTML"') == 2 and "bookmark" not in status.text
    again = client.get("/items/dropout").text  # a browser with its cookie: the GET records
    assert "/visit" not in again and "Opened 2 times" in again
    refused = client.post("/items/dropout/visit")
    assert refused.status_code == 403, "like every write, it needs the page's CSRF token"


def test_the_home_page_welcomes_a_returning_learner_back(client: TestClient) -> None:
    stranger = client.get("/").text
    assert "Welcome back" not in stranger
    sign_up(client, "ruth")
    client.get("/items/dropout")
    form(client, "/items/dropout/checks", prompt="1", knew="true")
    home = client.get("/").text
    assert "Welcome back, ruth" in home
    assert 'href="/items/dropout"' in home.split("welcome-back")[1].split("</section>")[0]
    assert "1 day" in home and "Practise today to keep it." in home
    assert "Nothing due" in home, "no quiz answered: no review scheduled"
    assert client.get("/?done=nonsense").status_code == 200, "an unknown confirmation is ignored"


def test_checking_a_prompt_makes_it_practising_and_starts_a_streak(client: TestClient) -> None:
    sign_up(client, "ben")
    response = client.post(
        "/items/dropout/checks",
        data={"prompt": "1", "knew": "true"},
        headers={"HX-Request": "true", "X-CSRF-Token": csrf_token(client)},
    )
    assert response.status_code == 200
    assert "Last time: you" in response.text  # knew it, or covered most of it
    # The status pill, out of band; not the bookmark form (a bookmark pressed meanwhile stays).
    assert 'id="item-status-pill" class="status-pill status-practising"' in response.text
    assert 'hx-swap-oob="outerHTML"' in response.text and "bookmark" not in response.text
    progress = client.get("/api/me/progress").json()
    assert progress["status_counts"]["practising"] == 1 and progress["streak_days"] == 1


def test_a_prompt_the_item_does_not_have_is_refused(client: TestClient) -> None:
    sign_up(client, "cleo")
    response = form(client, "/items/dropout/checks", prompt="7", knew="true")
    assert response.status_code == 422 and "no prompt number 7" in response.text
    assert client.get("/api/me/progress").json()["status_counts"]["practising"] == 0


def test_mastery_through_the_service_with_checks_on_two_days(
    client: TestClient, engine: Engine
) -> None:
    sign_up(client, "dan")
    with Session(engine) as session:
        from app.models import User

        user = session.exec(select(User)).one()
        item = session.exec(select(Item).where(Item.slug == "dropout")).one()
        data = learners.resolve_or_create(session, Identity(visitor="v", user_id=user.id))
        first = datetime(2026, 11, 1, 9, tzinfo=UTC)
        for day in (first, first + timedelta(days=2)):
            for prompt in (1, 2):
                study.record_check(data, item, prompt=prompt, knew=True, now=day)
        assert study.progress_of(data, item).status == "practising"  # type: ignore[union-attr]
        study.record_run(data, item, ok=True)
        assert study.progress_of(data, item).status == "mastered"  # type: ignore[union-attr]
        session.commit()
    assert client.get("/api/me/items/dropout").json()["status"] == "mastered"


def test_notes_are_markdown_shown_escaped(client: TestClient) -> None:
    sign_up(client, "eve")
    note = "**Scale** by 1/(1-p)\n\n<script>alert('x')</script> [link](javascript:alert(1))"
    form(client, "/items/dropout/note", text=note)
    page = client.get("/items/dropout").text
    rendered = page.split('class="note-rendered prose"')[1].split("</div>")[0]
    assert "<strong>Scale</strong>" in rendered
    assert "&lt;script&gt;" in rendered and "<script>" not in rendered
    assert "javascript:" not in rendered.replace("[link](javascript:alert(1))", "")


def test_a_note_too_long_is_refused_and_the_old_one_kept(client: TestClient) -> None:
    sign_up(client, "finn")
    form(client, "/items/dropout/note", text="keep me")
    response = form(client, "/items/dropout/note", text="x" * 20_001)
    assert response.status_code == 422 and "at most 20,000 characters" in response.text
    assert client.get("/api/me/items/dropout").json()["note"] == "keep me"


def test_an_empty_note_removes_it(client: TestClient) -> None:
    sign_up(client, "gus")
    form(client, "/items/dropout/note", text="temporary")
    form(client, "/items/dropout/note", text="   ")
    assert client.get("/api/me/items/dropout").json()["note"] == ""


# The dashboard and the list


def test_the_list_shows_statuses_and_filters_by_them(client: TestClient) -> None:
    sign_up(client, "jon")
    client.get("/items/dropout")
    form(client, "/items/batch-normalization/bookmark", on="true")
    listing = client.get("/items?deck=deep-learning").text
    assert listing.count("status-pill status-seen") == 1
    bookmarked = client.get("/items?progress=bookmarked").text
    assert bookmarked.count('class="item-row"') == 1 and "/items/batch-normalization" in bookmarked
    unseen = client.get("/items?deck=deep-learning&progress=new").text
    assert unseen.count('class="item-row"') == 37  # the bookmarked one was never opened
    assert client.get("/items?progress=bogus").status_code == 422


def test_no_bookmarks_yet_says_how_to_make_one(client: TestClient) -> None:
    page = client.get("/items?progress=bookmarked").text
    assert "No bookmarks yet" in page


def test_a_run_that_cannot_start_counts_as_no_practice(settings: Settings) -> None:
    """No sandbox worker behind the socket: the run is refused, and nothing is counted for
    it (runs that do run are counted in tests/runs/test_runs.py)."""
    no_worker = settings.model_copy(update={"run_queue": RunQueueKind.local})
    with TestClient(create_app(no_worker)) as client:
        _cannot_start(client)


def _cannot_start(client: TestClient) -> None:
    sign_up(client, "kim")
    response = client.post(
        "/api/runs",
        json={"code": "print(1)", "item": "dropout", "sample": 1},
        headers={"X-CSRF-Token": csrf_token(client)},
    )
    assert response.status_code == 503
    assert client.get("/api/me/items/dropout").json()["runs"] == 0


def test_an_open_answer_is_rated_by_the_key_points_ticked(
    client: TestClient, engine: Engine
) -> None:
    from tests.support.bank import add_model_answers

    add_model_answers(engine, "dropout")
    page = client.get("/items/dropout").text
    assert "Reveal the model answer" in page and "I knew it" not in page
    assert 'class="key-points"' in page  # inside the closed <details>, shown on reveal
    from app.models import Question

    with Session(engine) as session:
        item = session.exec(select(Item).where(Item.slug == "dropout")).one()
        question = session.exec(
            select(Question).where(Question.item_id == item.id, Question.position == 1)
        ).one()
    points = len(question.key_point_list)
    token = csrf_token(client, "/items/dropout")
    response = client.post(
        "/items/dropout/open",
        data={
            "position": "1",
            "covered": [str(n) for n in range(1, points + 1)],
            "csrf_token": token,
        },
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200 and "covered most of it" in response.text
    assert "Practising" in client.get("/items/dropout").text
    from app.models import ReviewEvent

    with Session(engine) as session:
        (event,) = session.exec(select(ReviewEvent)).all()
    assert (event.question_id, event.source, event.rating) == (question.id, "open", 4)
    bad = client.post(
        "/items/dropout/open", data={"position": "1", "covered": ["9"], "csrf_token": token}
    )
    assert bad.status_code == 422 and f"key points 1 to {points}" in bad.text


def test_answers_schedule_reviews_and_the_nav_counts_what_is_due(
    client: TestClient, engine: Engine
) -> None:
    from datetime import timedelta

    from app.models import utcnow
    from tests.support.bank import add_model_answers

    add_model_answers(engine, "dropout")
    token = csrf_token(client, "/items/dropout")
    client.post("/items/dropout/open", data={"position": "1", "csrf_token": token})  # Again
    assert "Nothing is due for review." in client.get("/review").text  # Again: in 10 minutes
    later = utcnow() + timedelta(hours=1)
    client.app.state.backprop.clock = lambda: later  # type: ignore[attr-defined]
    page = client.get("/review").text
    assert "Due now" in page and "Review 1 question now" in page
    assert "1 due</span>" in client.get("/items").text


def test_the_bookmark_answers_with_its_own_button_only(client: TestClient) -> None:
    page = client.get("/items/dropout").text
    token = re.search(r'<meta name="csrf-token" content="([^"]+)">', page).group(1)  # type: ignore[union-attr]
    answer = client.post(
        "/items/dropout/bookmark",
        data={"on": "true"},
        headers={"X-CSRF-Token": token, "HX-Request": "true"},
    )
    assert answer.status_code == 200
    assert answer.text.lstrip().startswith("<form") and 'hx-target="this"' in answer.text
    assert "Bookmarked" in answer.text and 'name="on" value="false"' in answer.text
    assert "status-pill" not in answer.text and "item-visit" not in answer.text
