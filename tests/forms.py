"""Helpers for tests that act as a browser: the CSRF token a page gives its forms."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient


def csrf_token(client: TestClient, path: str = "/") -> str:
    """The token the page at `path` puts in its forms, for this client's cookies."""
    html = client.get(path).text
    found = re.search(r'<meta name="csrf-token" content="([^"]+)">', html)
    assert found, f"no CSRF token on {path}"
    return found.group(1)


def csrf_headers(client: TestClient) -> dict[str, str]:
    return {"X-CSRF-Token": csrf_token(client)}


PASSWORD = "correct horse battery"


def sign_up(client: TestClient, username: str, password: str = PASSWORD) -> None:
    """Create an account through the sign-up form; the client is then signed in."""
    token = csrf_token(client, "/signup")
    response = client.post(
        "/signup",
        data={"username": username, "password": password, "csrf_token": token},
        follow_redirects=False,
    )
    assert response.status_code == 303, response.text


def sign_in(client: TestClient, username: str, password: str = PASSWORD) -> int:
    """Sign in through the form; returns the status (303 when it worked)."""
    token = csrf_token(client, "/signin")
    response = client.post(
        "/signin",
        data={"username": username, "password": password, "csrf_token": token},
        follow_redirects=False,
    )
    return response.status_code


def post_form(client: TestClient, path: str, data: dict[str, str], **kwargs: object) -> object:
    """A form post with the CSRF token of the client's current cookies."""
    return client.post(
        path, data={**data, "csrf_token": csrf_token(client)}, follow_redirects=False, **kwargs
    )  # type: ignore[arg-type]
