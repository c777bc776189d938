"""Progress: the status rules, streak and calendar, what pages record, the dashboard and
GET /api/me/progress agreeing, and the list's progress filter."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.identity import Identity
from app.models import Item
from app.services.mine import mine
from app.services.progress import Check, Status, calendar, item_status, streak
from tests.forms import csrf_token, form, sign_up

MONDAY = date(2026, 11, 16)


# The rules


def status(**kwargs: object) -> Status:
    defaults: dict[str, object] = {
        "visits": 0,
        "runs": 0,
        "runs_ok": 0,
        "checks": [],
        "prompts": [1, 2],
        "has_code": True,
    }
    return item_status(**{**defaults, **kwargs})  # type: ignore[arg-type]


def test_status_follows_what_the_learner_did() -> None:
    assert status() is Status.new
    assert status(visits=3) is Status.seen
    assert status(visits=1, runs=1) is Status.practising
    assert status(checks=[Check(1, False, MONDAY)]) is Status.practising


def test_mastery_needs_every_prompt_known_on_two_days_and_the_code_run() -> None:
    day2 = MONDAY + timedelta(days=1)
    both_twice = [Check(p, True, d) for d in (MONDAY, day2) for p in (1, 2)]
    assert status(checks=both_twice, runs=1, runs_ok=1) is Status.mastered
    assert status(checks=both_twice, runs=1, runs_ok=0) is Status.practising  # code never ran ok
    same_day = [Check(p, True, MONDAY) for p in (1, 2, 1, 2)]
    assert status(checks=same_day, runs_ok=1, runs=1) is Status.practising  # not spaced
    one_prompt = [Check(1, True, d) for d in (MONDAY, day2)]
    assert status(checks=one_prompt, runs_ok=1, runs=1) is Status.practising
    forgot = [*both_twice, Check(2, False, day2)]
    assert status(checks=forgot, runs_ok=1, runs=1) is Status.practising  # latest answer counts


def test_items_without_prompts_or_code_use_their_own_question() -> None:
    twice = [Check(0, True, MONDAY), Check(0, True, MONDAY + timedelta(days=3))]
    assert status(checks=twice, prompts=[], has_code=False) is Status.mastered


def test_streak_counts_practice_days_in_a_row_up_to_today_or_yesterday() -> None:
    today = MONDAY
    days = [today - timedelta(days=n) for n in (0, 1, 2, 4)]
    assert streak(days, today=today) == 3
    assert streak(days[1:], today=today) == 2  # nothing yet today: the streak still stands
    assert streak(days[2:], today=today) == 0  # yesterday was missed
    assert streak([], today=today) == 0


def test_calendar_covers_whole_weeks_ending_this_week() -> None:
    today = MONDAY + timedelta(days=2)  # a Wednesday
    cells = calendar({today: (2, 3), MONDAY: (1, 0)}, today=today, weeks=4)
    assert cells[0].day == MONDAY - timedelta(weeks=3) and cells[0].weekday == 0
    assert cells[-1].day == today and cells[-1].week == 3 and cells[-1].weekday == 2
    by_day = {c.day: c for c in cells}
    assert by_day[today].level > by_day[MONDAY].level > 0
    assert "3 practice actions, 2 pages read" in by_day[today].label


# Recording, through the pages


def test_opening_an_item_marks_it_seen_and_counts_the_day(client: TestClient) -> None:
    sign_up(client, "amy")
    page = client.get("/items/dropout").text
    assert "status-seen" in page and "Seen" in page
    progress = client.get("/api/me/progress").json()
    assert progress["status_counts"]["seen"] == 1
    assert progress["activity"][0]["views"] == 1 and progress["streak_days"] == 0  # reading only
    assert progress["continue"]["slug"] == "dropout"


def test_checking_a_prompt_makes_it_practising_and_starts_a_streak(client: TestClient) -> None:
    sign_up(client, "ben")
    response = client.post(
        "/items/dropout/checks",
        data={"prompt": "1", "knew": "true"},
        headers={"HX-Request": "true", "X-CSRF-Token": csrf_token(client)},
    )
    assert response.status_code == 200
    assert "Last time: you knew it" in response.text
    assert 'id="item-status" class="item-status" hx-swap-oob="outerHTML"' in response.text
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
        data = mine(session, Identity(visitor="v", user=user, session_token=None), create=True)
        assert data is not None
        first = datetime(2026, 11, 1, 9, tzinfo=UTC)
        for day in (first, first + timedelta(days=2)):
            for prompt in (1, 2):
                data.record_check(item, prompt=prompt, knew=True, now=day)
        assert data.progress_of(item).status == "practising"  # type: ignore[union-attr]
        data.record_run(item, ok=True)
        assert data.progress_of(item).status == "mastered"  # type: ignore[union-attr]
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


def test_a_new_learner_sees_what_to_do_first(client: TestClient) -> None:
    sign_up(client, "hana")
    page = client.get("/dashboard").text
    assert "Nothing here yet" in page and "Start with question 1" in page
    assert "No bookmarks yet" in page and "No runs yet" in page


def test_guests_have_a_dashboard_that_invites_them_to_sign_up(client: TestClient) -> None:
    page = client.get("/dashboard").text
    assert "You are not signed in" in page and "/signup?next=/dashboard" in page


def test_dashboard_and_api_show_the_same_figures(client: TestClient) -> None:
    sign_up(client, "ida")
    client.get("/items/dropout")
    client.get("/items/batch-normalization")
    form(client, "/items/dropout/bookmark", on="true")
    form(client, "/items/dropout/checks", prompt="1", knew="false")
    api = client.get("/api/me/progress").json()
    assert api["status_counts"] == {"new": 62, "seen": 1, "practising": 1, "mastered": 0}
    deep = next(d for d in api["decks"] if d["slug"] == "deep-learning")
    assert (deep["items"], deep["seen"], deep["practising"]) == (38, 1, 1)
    assert [b["slug"] for b in api["bookmarks"]] == ["dropout"]
    page = client.get("/dashboard").text
    assert 'aria-label="Deep learning: 0 mastered, 1 practising, 1 seen, of 38"' in page
    practising = '<span class="stat-value">1</span><span class="stat-label"><span class="status-dot'
    assert f'{practising} status-practising"' in page
    assert (
        page.count('class="cal-0"') + sum(page.count(f'class="cal-{n}"') for n in range(1, 5))
        >= 7 * 25
    )
    assert any(f'class="cal-{n}"' in page for n in range(1, 5))


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


def test_a_run_that_cannot_start_counts_as_no_practice(client: TestClient) -> None:
    """No sandbox worker here: the run is refused, and nothing is counted for it (runs
    that do run are counted in tests/test_runs.py)."""
    sign_up(client, "kim")
    response = client.post(
        "/api/runs",
        json={"code": "print(1)", "item": "dropout", "sample": 1},
        headers={"X-CSRF-Token": csrf_token(client)},
    )
    assert response.status_code == 503
    assert client.get("/api/me/items/dropout").json()["runs"] == 0
