"""Accounts: sign-up rules, sign-in sessions, CSRF, rate limits, bearer tokens, password
changes, export and deletion."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, func
from sqlmodel import Session, col, select

from app.main import create_app
from app.models import (
    Activity,
    ApiToken,
    ItemProgress,
    Learner,
    LoginSession,
    RecallCheck,
    User,
)
from app.progress import visit_writer
from app.settings import Settings
from tests.support.forms import PASSWORD, csrf_token, form, sign_in, sign_up


def rows(database_url: str, model: type) -> int:
    with Session(create_engine(database_url)) as session:
        return session.exec(select(func.count()).select_from(model)).one()


# Sign-up


def test_sign_up_creates_the_account_signs_in_and_hashes_the_password(
    client: TestClient, database_url: str
) -> None:
    sign_up(client, "Ada")
    assert "ada" in client.get("/dashboard").text  # stored lower-case, shown in the header
    with Session(create_engine(database_url)) as session:
        user = session.exec(select(User)).one()
    assert user.username == "ada"
    assert user.password_hash.startswith("$argon2id$") and PASSWORD not in user.password_hash


@pytest.mark.parametrize(
    ("username", "password", "says"),
    [
        ("bob", "short", "at least 8 characters"),
        ("bob", "password1", "too easy to guess"),
        ("bob", "iloveyou", "too easy to guess"),
        ("bobbyjones", "bobbyjones-rules", "too easy to guess"),
        ("b", PASSWORD, "3 to 40"),
        ("bad name!", PASSWORD, "3 to 40"),
    ],
)
def test_sign_up_refuses_bad_names_and_weak_passwords_with_a_reason(
    client: TestClient, database_url: str, username: str, password: str, says: str
) -> None:
    response = form(client, "/signup", username=username, password=password)
    assert response.status_code == 422
    assert says in response.text and 'role="alert"' in response.text
    assert rows(database_url, User) == 0


def test_a_sign_up_error_focuses_the_wrong_field_and_keeps_the_right_one(
    client: TestClient,
) -> None:
    sign_up(client, "olga")
    client.cookies.clear()
    taken = form(client, "/signup", token_from="/signup", username="olga", password=PASSWORD)
    assert taken.status_code == 422 and "is taken" in taken.text
    username_input = re.search(r'<input id="username"[^>]*>', taken.text).group(0)  # type: ignore[union-attr]
    password_input = re.search(r'<input id="password"[^>]*>', taken.text).group(0)  # type: ignore[union-attr]
    assert "autofocus" in username_input and 'aria-invalid="true"' in username_input
    assert f'value="{PASSWORD}"' in password_input, "the password was fine: kept"
    weak = form(client, "/signup", token_from="/signup", username="pia", password="password")
    username_input = re.search(r'<input id="username"[^>]*>', weak.text).group(0)  # type: ignore[union-attr]
    password_input = re.search(r'<input id="password"[^>]*>', weak.text).group(0)  # type: ignore[union-attr]
    assert 'value="pia"' in username_input and "autofocus" not in username_input
    assert "autofocus" in password_input and 'aria-invalid="true"' in password_input
    assert "value=" not in password_input, "a wrong password is never sent back"
    api = client.post("/api/users", json={"username": "pia", "password": "short"})
    assert api.status_code == 422 and api.json()["field"] == "password"


def test_sign_up_mistakes_do_not_count_toward_the_limit(
    client: TestClient, database_url: str
) -> None:
    limits = client.app.state.backprop.account_guards.limits  # type: ignore[attr-defined]
    for n in range(limits.sign_up_per_client.limit + 3):
        body = {"username": f"x{n}", "password": "short"}
        assert client.post("/api/users", json=body).status_code == 422
        assert (
            client.post("/api/users", json={"username": "!", "password": PASSWORD}).status_code
            == 422
        )
    for n in range(limits.sign_up_per_client.limit):
        body = {"username": f"new{n}", "password": PASSWORD}
        assert client.post("/api/users", json=body).status_code == 201
    last = client.post("/api/users", json={"username": "zed9", "password": PASSWORD})
    assert last.status_code == 429


def test_no_composition_rules_a_long_lowercase_passphrase_is_fine(client: TestClient) -> None:
    sign_up(client, "carol", "tulips under a grey sky")


def test_a_taken_username_is_refused(client: TestClient, database_url: str) -> None:
    sign_up(client, "dora")
    client.cookies.clear()
    response = form(client, "/signup", username="DORA", password=PASSWORD)
    assert response.status_code == 422 and "taken" in response.text
    assert rows(database_url, User) == 1


# Sessions


def test_session_cookie_is_httponly_lax_and_secure_behind_https(settings: Settings) -> None:
    with TestClient(create_app(settings), base_url="https://testserver") as client:
        token = csrf_token(client, "/signup")
        response = client.post(
            "/signup",
            data={"username": "erin", "password": PASSWORD, "csrf_token": token},
            follow_redirects=False,
        )
    cookie = response.headers["set-cookie"]
    assert cookie.startswith("backprop_session=")
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Secure" in cookie


def test_plain_http_cookie_is_not_marked_secure(client: TestClient) -> None:
    token = csrf_token(client, "/signup")
    response = client.post(
        "/signup",
        data={"username": "fred", "password": PASSWORD, "csrf_token": token},
        follow_redirects=False,
    )
    assert "Secure" not in response.headers["set-cookie"]


def test_sign_in_rotates_the_session_and_the_old_cookie_stops_working(
    client: TestClient, database_url: str
) -> None:
    sign_up(client, "gina")
    old = client.cookies["backprop_session"]
    assert sign_in(client, "gina") == 303  # signing in again, already signed in
    new = client.cookies["backprop_session"]
    assert new != old
    assert rows(database_url, LoginSession) == 1
    client.cookies.clear()
    client.cookies.set("backprop_session", old)
    assert client.get("/account", follow_redirects=False).status_code == 303


def test_sign_out_ends_the_session(client: TestClient, database_url: str) -> None:
    sign_up(client, "hugo")
    cookie = client.cookies["backprop_session"]
    signed_out = form(client, "/signout")
    assert signed_out.status_code == 303
    assert "You are signed out" in client.get(signed_out.headers["location"]).text
    assert rows(database_url, LoginSession) == 0
    client.cookies.clear()
    client.cookies.set("backprop_session", cookie)
    assert "Sign in" in client.get("/").text


def test_wrong_password_is_refused_without_saying_which_part_was_wrong(
    client: TestClient,
) -> None:
    sign_up(client, "ivy")
    client.cookies.clear()
    wrong = form(client, "/signin", username="ivy", password="not the password")
    unknown = form(client, "/signin", username="nobody", password=PASSWORD)
    assert wrong.status_code == unknown.status_code == 401
    assert "do not match an account" in wrong.text and "do not match an account" in unknown.text
    assert "backprop_session" not in client.cookies


def test_sign_in_does_not_redirect_to_another_site(client: TestClient) -> None:
    sign_up(client, "jack")
    client.cookies.clear()
    token = csrf_token(client, "/signin")
    for target in ("//evil.example/", "https://evil.example/", "/\\evil.example"):
        response = client.post(
            "/signin",
            data={"username": "jack", "password": PASSWORD, "csrf_token": token, "next": target},
            follow_redirects=False,
        )
        assert response.headers["location"] == "/dashboard"
        token = csrf_token(client, "/")


def test_pages_that_need_an_account_send_guests_to_sign_in(client: TestClient) -> None:
    response = client.get("/account", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/signin?next=/account"


# CSRF


def test_forms_without_a_valid_csrf_token_are_refused_and_change_nothing(
    client: TestClient, database_url: str
) -> None:
    client.get("/")
    for token in (None, "forged", csrf_token(client) + "x"):
        data = {"username": "kate", "password": PASSWORD}
        if token:
            data["csrf_token"] = token
        response = client.post("/signup", data=data)
        assert response.status_code == 403
        assert "security token" in response.text
    assert rows(database_url, User) == 0


def test_htmx_requests_need_the_token_header(client: TestClient, database_url: str) -> None:
    client.get("/")
    client.get("/items/dropout")
    refused = client.post(
        "/items/dropout/bookmark", data={"on": "true"}, headers={"HX-Request": "true"}
    )
    assert refused.status_code == 403 and rows(database_url, ItemProgress) == 1  # the visit only
    accepted = client.post(
        "/items/dropout/bookmark",
        data={"on": "true"},
        headers={"HX-Request": "true", "X-CSRF-Token": csrf_token(client)},
    )
    assert accepted.status_code == 200 and 'aria-pressed="true"' in accepted.text


def test_a_token_from_another_browser_does_not_work(client: TestClient) -> None:
    other = csrf_token(client)  # bound to this client's visitor cookie
    client.cookies.clear()
    client.cookies.set("backprop_visitor", "someone-else")
    response = client.post("/items/dropout/bookmark", data={"on": "true", "csrf_token": other})
    assert response.status_code == 403


def test_api_calls_riding_on_cookies_need_the_token_but_bearer_calls_do_not(
    client: TestClient,
) -> None:
    sign_up(client, "liam")
    put = {"bookmarked": True}
    assert client.put("/api/me/items/dropout", json=put).status_code == 403
    ok = client.put("/api/me/items/dropout", json=put, headers={"X-CSRF-Token": csrf_token(client)})
    assert ok.status_code == 200
    client.cookies.clear()
    bearer = client.post("/api/token", data={"username": "liam", "password": PASSWORD}).json()
    auth = {"Authorization": f"Bearer {bearer['access_token']}"}
    assert client.put("/api/me/items/dropout", json=put, headers=auth).status_code == 200


# Rate limits


def test_repeated_wrong_passwords_lock_out_the_guesser_not_the_owner(
    client: TestClient, settings: Settings
) -> None:
    sign_up(client, "mia")
    client.cookies.clear()
    for _ in range(5):
        assert form(client, "/signin", username="mia", password="wrong password").status_code == 401
    locked = form(client, "/signin", username="mia", password=PASSWORD)  # even the right one
    assert locked.status_code == 429
    assert int(locked.headers["Retry-After"]) > 0 and "try again in" in locked.text
    api = client.post("/api/token", data={"username": "mia", "password": PASSWORD})
    assert api.status_code == 429 and "Retry-After" in api.headers
    # The owner, from elsewhere, still gets in: the guesser's failures are the guesser's.
    owner = TestClient(client.app, client=("203.0.113.7", 50000))
    assert sign_in(owner, "mia") == 303


def test_password_checks_for_changes_and_deletion_are_limited_per_client(
    client: TestClient,
) -> None:
    sign_up(client, "max")
    for _ in range(5):
        wrong = form(client, "/account/delete", token_from="/account", password="not it at all")
        assert wrong.status_code == 422 and "nothing was deleted" in wrong.text
    locked = form(client, "/account/delete", token_from="/account", password=PASSWORD)
    assert locked.status_code == 429 and locked.headers["Retry-After"]
    change = form(
        client,
        "/account/password",
        token_from="/account",
        current_password=PASSWORD,
        new_password="another long passphrase",
    )
    assert change.status_code == 429


def test_many_sign_in_attempts_from_one_client_are_slowed_down(client: TestClient) -> None:
    limit = client.app.state.backprop.account_guards.limits.sign_in_per_client.limit  # type: ignore[attr-defined]
    for n in range(limit):
        client.post("/api/token", data={"username": f"user{n}", "password": "whatever1"})
    response = client.post("/api/token", data={"username": "another", "password": "whatever1"})
    assert response.status_code == 429 and "from here" in response.json()["detail"]


def test_sign_ups_from_one_client_are_limited(client: TestClient, database_url: str) -> None:
    limits = client.app.state.backprop.account_guards.limits  # type: ignore[attr-defined]
    for n in range(limits.sign_up_per_client.limit):
        body = {"username": f"new{n}", "password": PASSWORD}
        assert client.post("/api/users", json=body).status_code == 201
    response = client.post("/api/users", json={"username": "onemore", "password": PASSWORD})
    assert response.status_code == 429 and response.headers["Retry-After"]
    assert rows(database_url, User) == limits.sign_up_per_client.limit


# The API


# Password change, export, deletion


def test_changing_the_password_signs_out_other_browsers_and_tokens(
    client: TestClient, settings: Settings
) -> None:
    sign_up(client, "quinn")
    token = client.post("/api/token", data={"username": "quinn", "password": PASSWORD}).json()
    with TestClient(create_app(settings)) as laptop:
        assert sign_in(laptop, "quinn") == 303
        response = form(
            client, "/account/password", current_password=PASSWORD, new_password="a brand new one"
        )
        assert response.status_code == 200 and "signed out" in response.text
        assert laptop.get("/account", follow_redirects=False).status_code == 303
    auth = {"Authorization": f"Bearer {token['access_token']}"}
    assert client.get("/api/me", headers=auth).status_code == 401
    assert client.get("/account").status_code == 200  # this browser stays signed in
    client.cookies.clear()
    assert sign_in(client, "quinn", "a brand new one") == 303


def test_a_wrong_current_password_changes_nothing(client: TestClient) -> None:
    sign_up(client, "rosa")
    response = form(
        client, "/account/password", current_password="not it at all", new_password="another one!"
    )
    assert response.status_code == 422 and "nothing was changed" in response.text
    client.cookies.clear()
    assert sign_in(client, "rosa") == 303


def test_export_holds_everything_of_mine_and_no_secrets(client: TestClient) -> None:
    sign_up(client, "sam")
    client.get("/items/dropout")
    form(client, "/items/dropout/bookmark", on="true")
    form(client, "/items/dropout/note", text="remember the 1/(1-p) scaling")
    form(client, "/items/dropout/checks", prompt="1", knew="true")
    response = client.get("/account/export")
    assert response.headers["content-disposition"].startswith("attachment")
    data = response.json()
    assert data["account"]["username"] == "sam"
    (row,) = data["progress"]
    assert row["item"] == "dropout" and row["bookmarked"] and "1/(1-p)" in row["note"]
    assert data["recall_checks"][0]["knew"] is True
    assert data["activity"][0]["views"] == 1 and data["activity"][0]["checks"] == 1
    assert "password_hash" not in response.text and "argon2" not in response.text


def test_deleting_the_account_removes_everything_attached(
    client: TestClient, database_url: str
) -> None:
    sign_up(client, "tess")
    client.get("/items/dropout")
    form(client, "/items/dropout/note", text="mine")
    form(client, "/items/dropout/checks", prompt="1", knew="false")
    client.post("/api/token", data={"username": "tess", "password": PASSWORD})
    refused = form(client, "/account/delete", password="wrong password")
    assert refused.status_code == 422 and rows(database_url, User) == 1
    response = form(client, "/account/delete", password=PASSWORD)
    assert response.status_code == 303
    confirmed = client.get(response.headers["location"]).text
    assert "Your account and everything recorded with it have been deleted." in confirmed
    for model in (User, Learner, LoginSession, ApiToken, ItemProgress, RecallCheck, Activity):
        assert rows(database_url, model) == 0, model.__name__
    assert "Sign in" in client.get("/").text


# Guests


def test_guest_progress_is_carried_into_a_new_account(
    client: TestClient, database_url: str
) -> None:
    client.get("/")  # a browser's first request gets its visitor cookie; visits count after
    client.get("/items/dropout")
    form(client, "/items/dropout/bookmark", on="true")
    form(client, "/items/dropout/note", text="as a guest")
    sign_up(client, "uma")
    mine = client.get("/api/me/items/dropout").json()
    assert mine["bookmarked"] and mine["note"] == "as a guest" and mine["visits"] == 1
    with Session(create_engine(database_url)) as session:
        (learner,) = session.exec(select(Learner)).all()
    assert learner.user_id is not None and learner.visitor is None


def test_a_guests_repeat_visits_not_yet_written_are_carried_into_a_new_account(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sign-up writes the account and then the guest's deferred visits, in one transaction
    (two would wait on each other: a 503 after ten seconds)."""
    monkeypatch.setattr(visit_writer, "FLUSH_SECONDS", 3600)  # the writer's thread waits
    client.get("/")
    for _ in range(3):
        client.get("/items/dropout")  # the first is written at once, the others deferred
    sign_up(client, "ursula")
    assert client.get("/api/me/items/dropout").json()["visits"] == 3


def test_guest_progress_merges_into_an_existing_account_at_sign_in(client: TestClient) -> None:
    sign_up(client, "vera")
    client.get("/items/dropout")
    form(client, "/items/dropout/note", text="from the laptop")
    form(client, "/signout")
    client.cookies.clear()  # another browser
    client.get("/")
    client.get("/items/dropout")
    client.get("/items/batch-normalization")
    form(client, "/items/dropout/bookmark", on="true")
    form(client, "/items/dropout/note", text="from the phone")
    assert sign_in(client, "vera") == 303
    dropout = client.get("/api/me/items/dropout").json()
    assert dropout["visits"] == 2 and dropout["bookmarked"]
    assert dropout["note"] == "from the laptop\n\nfrom the phone"
    assert client.get("/api/me/items/batch-normalization").json()["status"] == "seen"


def test_a_failure_while_merging_leaves_nothing_half_done(
    client: TestClient, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sign_up(client, "walt")
    client.get("/items/dropout")  # the account has progress of its own: sign-in will merge
    form(client, "/signout")
    client.cookies.clear()
    client.get("/")
    client.get("/items/dropout")
    form(client, "/items/dropout/bookmark", on="true")

    from app.progress import study

    def crash(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the process died here")

    monkeypatch.setattr(study, "refresh_status", crash)  # after rows were moved
    token = csrf_token(client, "/signin")
    with pytest.raises(RuntimeError):
        client.post("/signin", data={"username": "walt", "password": PASSWORD, "csrf_token": token})
    with Session(create_engine(database_url)) as session:
        learners = session.exec(select(Learner).order_by(col(Learner.id))).all()
        assert [(bool(x.user_id), bool(x.visitor)) for x in learners] == [
            (True, False),
            (False, True),
        ]
        assert session.exec(select(LoginSession)).all() == []  # signed out, not signed in again
        progress = session.exec(select(ItemProgress).order_by(col(ItemProgress.learner_id))).all()
        assert [(p.learner_id, p.bookmarked) for p in progress] == [
            (learners[0].id, False),
            (learners[1].id, True),
        ]


# Recovery


def test_a_recovery_code_sets_a_new_password_once_and_ends_other_sessions(
    client: TestClient, settings: Settings
) -> None:
    codes = sign_up(client, "rosa")
    assert len(codes) == 10 and len(set(codes)) == 10
    assert all(re.fullmatch(r"[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}", c) for c in codes)
    with TestClient(create_app(settings)) as laptop:
        sign_in(laptop, "rosa")
        client.cookies.clear()
        new = "a brand new passphrase"
        wrong = form(
            client,
            "/forgot",
            token_from="/forgot",
            username="rosa",
            code="aaaa-bbbb-cccc",
            new_password=new,
        )
        assert wrong.status_code == 422 and "do not match" in wrong.text
        typed = codes[0].upper().replace("-", " ")  # as read off paper
        reset = form(
            client, "/forgot", token_from="/forgot", username="rosa", code=typed, new_password=new
        )
        assert (
            reset.status_code == 303 and reset.headers["location"] == "/account?done=password-reset"
        )
        assert "Your new password is set" in client.get(reset.headers["location"]).text
        assert laptop.get("/account", follow_redirects=False).status_code == 303, "signed out"
        assert sign_in(laptop, "rosa", new) == 303
        client.cookies.clear()
        again = form(
            client,
            "/forgot",
            token_from="/forgot",
            username="rosa",
            code=codes[0],
            new_password="another passphrase",
        )
        assert again.status_code == 422, "a code works once"
    assert sign_in(client, "rosa", new) == 303
    left = client.get("/account/recovery-codes").text
    assert "<strong>9</strong> unused recovery codes" in left, "the used code is gone"


def test_recovery_attempts_are_limited_like_sign_ins(client: TestClient) -> None:
    sign_up(client, "sam")
    client.cookies.clear()
    token = csrf_token(client, "/forgot")
    limit = client.app.state.backprop.account_guards.limits.failures_per_account_client.limit  # type: ignore[attr-defined]
    for _ in range(limit):
        data = {"username": "sam", "code": "wrong", "new_password": PASSWORD, "csrf_token": token}
        assert client.post("/forgot", data=data).status_code == 422
    data = {"username": "sam", "code": "wrong", "new_password": PASSWORD, "csrf_token": token}
    limited = client.post("/forgot", data=data)
    assert limited.status_code == 429 and limited.headers["Retry-After"]


def test_new_recovery_codes_need_the_password_and_replace_the_old(client: TestClient) -> None:
    old = sign_up(client, "tom")
    assert "10</strong> unused recovery codes" in client.get("/account/recovery-codes").text
    refused = form(client, "/account/recovery-codes", token_from="/account", password="wrong one")
    assert refused.status_code == 422 and "not right" in refused.text
    made = form(client, "/account/recovery-codes", token_from="/account", password=PASSWORD)
    fresh = re.findall(r"<li><code>([a-z0-9-]+)</code></li>", made.text)
    assert made.status_code == 200 and len(fresh) == 10 and not set(fresh) & set(old)
    client.cookies.clear()
    stale = form(
        client,
        "/forgot",
        token_from="/forgot",
        username="tom",
        code=old[1],
        new_password="x passphrase 9",
    )
    assert stale.status_code == 422, "the old codes stopped working"


def test_the_api_sign_up_returns_the_recovery_codes_once(client: TestClient) -> None:
    body = client.post("/api/users", json={"username": "una", "password": PASSWORD}).json()
    assert len(body["recovery_codes"]) == 10


def test_an_operator_resets_a_password_from_the_command_line(
    client: TestClient, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from app import cli

    sign_up(client, "vera")
    monkeypatch.setenv("DATABASE_URL", settings.database_url)
    monkeypatch.setattr("sys.stdin", io.StringIO("set by the operator\n"))
    assert cli.main(["reset-password", "vera"]) == 0
    assert client.get("/account", follow_redirects=False).status_code == 303, "sessions ended"
    assert sign_in(client, "vera", "set by the operator") == 303
    monkeypatch.setattr("sys.stdin", io.StringIO("short\n"))
    assert cli.main(["reset-password", "vera"]) == 1
    assert cli.main(["reset-password", "nobody-here"]) == 1
