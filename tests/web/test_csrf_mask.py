"""The CSRF token a page's forms carry is masked afresh for every answer (BREACH: a secret
that read the same in every compressed answer could be guessed from their sizes), once per
answer: every form of one page carries the same masked token, and any of them is accepted."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from tests.support.forms import sign_up

FIELD = re.compile(r'name="csrf_token" value="([0-9a-f]+)"')
META = re.compile(r'<meta name="csrf-token" content="([0-9a-f]+)">')


def _tokens(page: str) -> set[str]:
    return set(FIELD.findall(page)) | set(META.findall(page))


def test_one_masked_token_per_answer_never_the_same_twice_and_each_accepted(
    client: TestClient,
) -> None:
    sign_up(client, "yara")
    first, second = (client.get("/items/dropout").text for _ in range(2))
    assert len(FIELD.findall(first)) > 1  # the page has several forms
    (one,), (other,) = _tokens(first), _tokens(second)
    assert one != other
    for token in (one, other):
        saved = client.post("/items/dropout/bookmark", data={"on": "true", "csrf_token": token})
        assert saved.status_code == 200
    refused = client.post("/items/dropout/bookmark", data={"on": "true", "csrf_token": "0" * 80})
    assert refused.status_code == 403
