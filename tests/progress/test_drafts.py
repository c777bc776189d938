"""An account's drafts: kept per item sample on the server, restored in the page, reset."""

from __future__ import annotations

import json
import re

from fastapi.testclient import TestClient

from tests.support.forms import csrf_headers, sign_up


def _drafts_in(page: str) -> dict[str, str]:
    found = re.search(r'<script type="application/json" id="drafts">(.*?)</script>', page)
    return json.loads(found.group(1)) if found else {}


def test_an_accounts_draft_is_kept_restored_and_reset(client: TestClient) -> None:
    sign_up(client, "drafter")
    headers = csrf_headers(client)
    code = "print('my </script> version')"
    saved = client.post("/items/dropout/drafts/1", data={"code": code}, headers=headers)
    assert saved.status_code == 204
    page = client.get("/items/dropout").text
    assert 'data-drafts="account"' in page
    assert _drafts_in(page) == {"1": code}, "kept as JSON that cannot end its script early"
    again = client.post("/items/dropout/drafts/1", data={"code": "v2"}, headers=headers)
    assert again.status_code == 204 and _drafts_in(client.get("/items/dropout").text) == {"1": "v2"}
    gone = client.post("/items/dropout/drafts/1/discard", headers=headers)
    assert gone.status_code == 204 and _drafts_in(client.get("/items/dropout").text) == {}


def test_bad_drafts_are_refused_and_change_nothing(client: TestClient) -> None:
    sign_up(client, "careful")
    headers = csrf_headers(client)
    assert (
        client.post("/items/dropout/drafts/1", data={"code": "kept"}, headers=headers).status_code
        == 204
    )
    no_sample = client.post("/items/dropout/drafts/99", data={"code": "x"}, headers=headers)
    assert no_sample.status_code == 422 and "no sample 99" in no_sample.text
    too_long = client.post("/items/dropout/drafts/1", data={"code": "x" * 60_000}, headers=headers)
    assert too_long.status_code == 422  # longer than a draft may be, well under the body cap
    no_item = client.post("/items/nothing-here/drafts/1", data={"code": "x"}, headers=headers)
    assert no_item.status_code == 404
    assert client.post("/items/dropout/drafts/1", data={"code": "x"}).status_code == 403
    assert _drafts_in(client.get("/items/dropout").text) == {"1": "kept"}


def test_a_guest_keeps_drafts_in_the_browser_not_on_the_server(client: TestClient) -> None:
    page = client.get("/items/dropout").text
    assert 'data-drafts="browser"' in page
    headers = csrf_headers(client)
    refused = client.post(
        "/items/dropout/drafts/1", data={"code": "x"}, headers=headers, follow_redirects=False
    )
    assert refused.status_code == 303 and refused.headers["location"].startswith("/signin")
