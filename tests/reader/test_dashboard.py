"""The learner's overview pages (app/reader/routes/dashboard.py): the dashboard and the
notes page."""

from __future__ import annotations

from datetime import date

from fastapi.testclient import TestClient

from tests.support.forms import csrf_token, form, sign_up

MONDAY = date(2026, 11, 16)


# The rules


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
    assert api["status_counts"] == {
        "new": api["items"] - 2,
        "seen": 1,
        "practising": 1,
        "mastered": 0,
    }
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


def test_the_notes_page_shows_every_note_in_full_escaped(client: TestClient) -> None:
    assert "No notes yet." in client.get("/notes").text
    form(client, "/items/dropout/note", token_from="/items/dropout", text="**Keep** <b>p</b>")
    adam = "/items/optimizers-sgd-momentum-rmsprop-adam"
    form(client, f"{adam}/note", token_from=adam, text="later")
    page = client.get("/notes")
    assert page.status_code == 200 and "2 notes" in page.text
    assert "<strong>Keep</strong>" in page.text and "&lt;b&gt;p&lt;/b&gt;" in page.text
    assert page.text.index("later") < page.text.index("Keep")  # the latest change first
    assert 'href="/notes"' in client.get("/dashboard").text


def test_readiness_forecasts_recall_per_topic_for_an_interview_date(client: TestClient) -> None:
    from datetime import timedelta

    from app.models import utcnow

    token = csrf_token(client, "/items/dropout")
    covered = {"position": "1", "covered": ["1", "2"], "csrf_token": token}
    assert client.post("/items/dropout/open", data=covered).status_code in (200, 303)
    day = (utcnow() + timedelta(days=10)).date().isoformat()
    page = client.get(f"/dashboard?interview={day}")
    assert page.status_code == 200 and "Expected recall on" in page.text
    assert "Review these first" in page.text and 'role="img"' in page.text
    past = client.get("/dashboard?interview=2000-01-01")
    assert past.status_code == 422 and "in the past" in past.text
