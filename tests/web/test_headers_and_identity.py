"""What every answer carries, and who a request is taken to be (app/web/)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.serve import proxy_options
from app.settings import Settings
from tests.support.forms import PASSWORD, sign_up


def test_pages_and_api_answers_are_never_stored_but_static_files_are(client: TestClient) -> None:
    for path in ("/", "/items", "/items/dropout", "/dashboard", "/api/items", "/api/health"):
        assert client.get(path).headers["cache-control"] == "no-store", path
    css = client.get("/static/css/app.css?v=1")
    assert "immutable" in css.headers["cache-control"]


def test_a_look_alike_cookie_does_not_stand_in_for_the_visitor_cookie(client: TestClient) -> None:
    client.cookies.set("xbackprop_visitor", "not-the-real-one")
    response = client.get("/")
    assert "backprop_visitor=" in response.headers.get("set-cookie", "")


def test_a_bad_bearer_header_never_falls_back_to_the_session_cookie(client: TestClient) -> None:
    sign_up(client, "bea")
    assert client.get("/api/me").status_code == 200  # the cookie alone signs in
    response = client.get("/api/me", headers={"Authorization": "Bearer not-a-token"})
    assert response.status_code == 401 and "invalid_token" in response.headers["WWW-Authenticate"]
    assert PASSWORD  # the account exists; the header decided


def test_forwarded_headers_are_believed_only_from_configured_proxies() -> None:
    assert proxy_options(Settings()) == {"proxy_headers": False}
    trusted = Settings(trusted_proxies="10.0.0.5")
    assert proxy_options(trusted) == {"proxy_headers": True, "forwarded_allow_ips": "10.0.0.5"}


def test_x_forwarded_for_does_not_change_the_address_limits_count(client: TestClient) -> None:
    limits = client.app.state.backprop.account_guards.limits  # type: ignore[attr-defined]
    for n in range(limits.sign_in_per_client.limit):
        spoof = {"X-Forwarded-For": f"192.0.2.{n}"}
        client.post("/api/token", data={"username": f"u{n}", "password": "x" * 9}, headers=spoof)
    last = client.post(
        "/api/token",
        data={"username": "z", "password": "x" * 9},
        headers={"X-Forwarded-For": "192.0.2.200"},
    )
    assert last.status_code == 429
