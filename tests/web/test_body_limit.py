"""Request bodies are capped before they are read (app/web/body_limit.py)."""

from __future__ import annotations

from collections.abc import Iterator

from fastapi.testclient import TestClient

from tests.support.forms import csrf_token


def test_a_declared_length_over_the_cap_is_refused_before_reading(client: TestClient) -> None:
    client.headers["X-CSRF-Token"] = csrf_token(client)
    body = b'{"code": "' + b"#" * (200 * 1024) + b'"}'
    response = client.post("/api/runs", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 413 and "160 KiB" in response.json()["detail"]
    assert response.headers["cache-control"] == "no-store"


def test_a_chunked_body_is_counted_as_it_arrives(client: TestClient) -> None:
    client.headers["X-CSRF-Token"] = csrf_token(client)
    sent = 0

    def chunks() -> Iterator[bytes]:
        nonlocal sent
        yield b'{"code": "'
        for _ in range(1000):  # 1000 x 16 KiB offered; far fewer may be read
            sent += 1
            yield b"#" * 16384
        yield b'"}'

    response = client.post(
        "/api/runs", content=chunks(), headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    assert "KiB" in response.json()["detail"]


def test_forms_have_a_smaller_cap_than_runs(client: TestClient) -> None:
    token = csrf_token(client, "/items/dropout")
    big = {"text": "x" * (70 * 1024), "csrf_token": token}
    response = client.post("/items/dropout/note", data=big)
    assert response.status_code == 413
    assert "64 KiB" in response.text
    ok = client.post("/items/dropout/note", data={"text": "short", "csrf_token": token})
    assert ok.status_code in (200, 303)


def test_a_run_just_under_the_cap_is_read_and_judged_on_its_code(client: TestClient) -> None:
    client.headers["X-CSRF-Token"] = csrf_token(client)
    response = client.post("/api/runs", json={"code": "#" * (64 * 1024 + 1)})
    assert response.status_code == 400 and response.json()["verdict"] == "rejected"
