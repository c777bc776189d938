"""Helpers for tests that act as a browser: the CSRF token a page gives its forms."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from httpx2 import Response


def csrf_token(client: TestClient, path: str = "/") -> str:
    """The token the page at `path` puts in its forms, for this client's cookies."""
    html = client.get(path).text
    found = re.search(r'<meta name="csrf-token" content="([^"]+)">', html)
    assert found, f"no CSRF token on {path}"
    return found.group(1)


def csrf_headers(client: TestClient) -> dict[str, str]:
    return {"X-CSRF-Token": csrf_token(client)}


PASSWORD = "correct horse battery"


def form(client: TestClient, path: str, *, token_from: str = "/", **data: str) -> Response:
    """Post a form as the page at `token_from` would: with its CSRF token, not following
    the redirect that answers success."""
    token = csrf_token(client, token_from)
    return client.post(path, data={**data, "csrf_token": token}, follow_redirects=False)


def sign_up(client: TestClient, username: str, password: str = PASSWORD) -> list[str]:
    """Create an account through the sign-up form; the client is then signed in. Returns
    the recovery codes the form showed."""
    response = form(client, "/signup", token_from="/signup", username=username, password=password)
    assert response.status_code == 200 and "Save your recovery codes" in response.text, (
        response.text
    )
    return re.findall(r"<li><code>([a-z0-9-]+)</code></li>", response.text)


def sign_in(client: TestClient, username: str, password: str = PASSWORD) -> int:
    """Sign in through the form; returns the status (303 when it worked)."""
    return form(
        client, "/signin", token_from="/signin", username=username, password=password
    ).status_code
