"""Each person sees only their own data: user B can read, change or delete nothing of user
A's, through pages or the API, however the ids are guessed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from tests.support.forms import PASSWORD, csrf_token, sign_up


@pytest.fixture
def alice_and_bob(settings: Settings) -> Iterator[tuple[TestClient, TestClient]]:
    """Two browsers on one app: Alice with a bookmark, a note and a recall check."""
    app = create_app(settings)
    with TestClient(app) as alice, TestClient(app) as bob:
        sign_up(alice, "alice")
        alice.get("/items/dropout")
        token = csrf_token(alice)
        alice.post("/items/dropout/bookmark", data={"on": "true", "csrf_token": token})
        alice.post("/items/dropout/note", data={"text": "alice's secret", "csrf_token": token})
        alice.post(
            "/items/dropout/checks", data={"prompt": "1", "knew": "true", "csrf_token": token}
        )
        sign_up(bob, "bob")
        yield alice, bob


def test_bob_sees_none_of_alices_progress_on_pages(
    alice_and_bob: tuple[TestClient, TestClient],
) -> None:
    _, bob = alice_and_bob
    item = bob.get("/items/dropout").text
    assert "alice's secret" not in item and 'aria-pressed="true"' not in item
    assert "alice" not in bob.get("/dashboard").text
    assert bob.get("/items?progress=bookmarked").text.count('class="item-row"') == 0
    export = bob.get("/account/export").text
    assert "alice" not in export and "secret" not in export


def test_bob_sees_none_of_alices_progress_through_the_api(
    alice_and_bob: tuple[TestClient, TestClient],
) -> None:
    _, bob = alice_and_bob
    bob.cookies.clear()
    token = bob.post("/api/token", data={"username": "bob", "password": PASSWORD}).json()
    auth = {"Authorization": f"Bearer {token['access_token']}"}
    assert bob.get("/api/me", headers=auth).json()["username"] == "bob"
    mine = bob.get("/api/me/items/dropout", headers=auth).json()
    assert mine["note"] == "" and not mine["bookmarked"] and mine["status"] == "new"
    progress = bob.get("/api/me/progress", headers=auth).json()
    assert progress["bookmarks"] == [] and progress["status_counts"]["practising"] == 0
    assert "secret" not in bob.get("/api/me/export", headers=auth).text


def test_bobs_changes_touch_only_his_own_rows(alice_and_bob: tuple[TestClient, TestClient]) -> None:
    alice, bob = alice_and_bob
    token = csrf_token(bob)
    bob.post("/items/dropout/note", data={"text": "bob's", "csrf_token": token})
    bob.post("/items/dropout/bookmark", data={"on": "false", "csrf_token": token})
    bob.put("/api/me/items/dropout", json={"note": "overwrite?"}, headers={"X-CSRF-Token": token})
    mine = alice.get("/api/me/items/dropout").json()
    assert mine["note"] == "alice's secret" and mine["bookmarked"]


def test_bob_cannot_delete_alices_account_or_sign_in_as_her(
    alice_and_bob: tuple[TestClient, TestClient],
) -> None:
    alice, bob = alice_and_bob
    # Bob's own password deletes Bob, never Alice, whatever the form says.
    bob.post(
        "/account/delete",
        data={
            "password": PASSWORD,
            "username": "alice",
            "user_id": "1",
            "csrf_token": csrf_token(bob),
        },
    )
    assert alice.get("/api/me").json()["username"] == "alice"
    assert alice.get("/api/me/items/dropout").json()["note"] == "alice's secret"
    assert bob.get("/account", follow_redirects=False).status_code == 303


def test_a_stolen_csrf_token_or_a_guessed_session_does_not_help(
    alice_and_bob: tuple[TestClient, TestClient],
) -> None:
    alice, bob = alice_and_bob
    alices_token = csrf_token(alice)
    response = bob.post("/items/dropout/note", data={"text": "x", "csrf_token": alices_token})
    assert response.status_code == 403
    bob.cookies.clear()
    bob.cookies.set("backprop_session", "guessed-value")
    assert bob.get("/api/me").status_code == 401
