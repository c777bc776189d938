"""Running code through the app: POST /api/runs, the events stream, the stored run, limits,
ownership and practice counting. The runs are scripted (app/runqueue/fake.py), so these
need no root; tests/sandbox/test_app_runs.py runs a smaller set against the real worker."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlmodel import Session, select

from app.main import create_app
from app.models import Item, Run
from app.settings import RunQueueKind, Settings
from tests.support.forms import csrf_headers, csrf_token
from tests.support.runs import events_of


@pytest.fixture
def run_client(client: TestClient) -> TestClient:
    """A browser on the app with scripted runs: it has its visitor cookie, and sends the
    page's CSRF token with every call, as the runner script does."""
    client.headers["X-CSRF-Token"] = csrf_token(client)
    return client


def test_a_run_streams_its_output_and_is_stored(run_client: TestClient, database_url: str) -> None:
    response = run_client.post(
        "/api/runs",
        json={
            "code": "print('[0, 1, 2]')",
            "backend": "cpu",
            "item": "dropout",
            "sample": 1,
        },
    )
    assert response.status_code == 202
    run_id = response.json()["id"]
    events = events_of(run_client, run_id)
    kinds = [k for k, _ in events]
    assert kinds[0] == "started" and kinds[-1] == "result"
    assert "".join(e["data"] for k, e in events if k == "stdout") == "[0, 1, 2]\n"
    result = events[-1][1]
    assert result["verdict"] == "ok" and result["exit_code"] == 0
    assert result["backend"] == "cpu" and result["device"]
    assert events[0][1] == {"backend": "cpu", "device": result["device"]}

    stored = run_client.get(f"/api/runs/{run_id}").json()
    assert stored["status"] == "done" and stored["stdout"] == "[0, 1, 2]\n"
    assert stored["wall_ms"] > 0
    from sqlalchemy import create_engine

    with Session(create_engine(database_url)) as session:
        run = session.get(Run, run_id)
        item = session.exec(select(Item).where(Item.slug == "dropout")).one()
    assert run is not None and run.item_id == item.id and run.sample_index == 1
    assert len(run.code_sha256) == 64 and run.verdict == "ok"


def test_events_of_a_finished_run_replay_its_output(run_client: TestClient) -> None:
    run_id = run_client.post("/api/runs", json={"code": "print('once')"}).json()["id"]
    first = events_of(run_client, run_id)
    again = events_of(run_client, run_id)
    assert first[-1][1]["verdict"] == again[-1][1]["verdict"] == "ok"
    assert ("stdout", {"data": "once\n"}) in again


def test_output_is_text_even_when_it_looks_like_html(run_client: TestClient) -> None:
    run_id = run_client.post(
        "/api/runs", json={"code": "print('<script>alert(1)</script>')"}
    ).json()["id"]
    result = events_of(run_client, run_id)[-1][1]
    assert (
        result["stdout"] == "<script>alert(1)</script>\n"
    )  # JSON text; the page inserts it as text


def test_code_over_64_kib_is_rejected_and_nothing_is_stored(
    run_client: TestClient, database_url: str
) -> None:
    response = run_client.post("/api/runs", json={"code": "#" * (64 * 1024 + 1)})
    assert response.status_code == 400
    assert "Rejected" in response.json()["detail"] and "64 KiB" in response.json()["detail"]
    from sqlalchemy import create_engine

    with Session(create_engine(database_url)) as session:
        assert session.exec(select(Run)).all() == []


def test_body_that_is_not_utf8_is_rejected(run_client: TestClient) -> None:
    response = run_client.post(
        "/api/runs",
        content=b'{"code": "print(\xff)"}',
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 400
    assert response.json()["verdict"] == "rejected"
    lone = run_client.post(
        "/api/runs", content=b'{"code": "\\ud800"}', headers={"content-type": "application/json"}
    )
    assert lone.status_code == 400 and "UTF-8" in lone.json()["detail"]


def test_unknown_backend_and_unknown_item_are_refused(run_client: TestClient) -> None:
    assert run_client.post("/api/runs", json={"code": "1", "backend": "tpu"}).status_code == 422
    assert run_client.post("/api/runs", json={"code": "1", "item": "nope"}).status_code == 404


def test_unknown_run_is_404(run_client: TestClient) -> None:
    assert run_client.get("/api/runs/0123456789abcdef").status_code == 404
    assert run_client.get("/api/runs/0123456789abcdef/events").status_code == 404


def test_cancel_ends_the_run_killed(run_client: TestClient) -> None:
    run_id = run_client.post("/api/runs", json={"code": "print('start')\n# fake: hold"}).json()[
        "id"
    ]
    with run_client.stream("GET", f"/api/runs/{run_id}/events") as response:
        for line in response.iter_lines():
            if line.startswith("event: stdout"):
                break
    assert run_client.post(f"/api/runs/{run_id}/cancel").status_code == 202
    result = events_of(run_client, run_id)[-1][1]
    assert result["verdict"] == "killed" and result["detail"] == "Cancelled."


def test_too_many_runs_a_minute_get_429_with_retry_after(settings: Settings) -> None:
    limited = settings.model_copy(update={"runs_per_minute": 2})
    with TestClient(create_app(limited)) as client:
        for _ in range(2):
            started = client.post("/api/runs", json={"code": "print(1)"}).json()
            events_of(client, started["id"], headers={"X-Run-Token": started["token"]})
        response = client.post("/api/runs", json={"code": "print(1)"})
    assert response.status_code == 429
    assert int(response.headers["retry-after"]) >= 1
    assert "runs in a minute" in response.json()["detail"]


def test_a_full_queue_answers_503_with_retry_after(run_client: TestClient) -> None:
    response = run_client.post("/api/runs", json={"code": "# fake: busy"})
    assert response.status_code == 503
    assert response.headers["retry-after"] == "5"
    assert "busy" in response.json()["detail"]


def test_a_concurrent_run_limit_answers_429_and_frees_up_when_a_run_ends(
    run_client: TestClient,
) -> None:
    held = [
        run_client.post("/api/runs", json={"code": "# fake: hold"}).json()["id"] for _ in range(2)
    ]
    third = run_client.post("/api/runs", json={"code": "print('3')"})
    assert third.status_code == 429 and "2 runs going" in third.json()["detail"]
    run_client.post(f"/api/runs/{held[0]}/cancel")
    assert events_of(run_client, held[0])[-1][1]["verdict"] == "killed"
    assert run_client.post("/api/runs", json={"code": "print('4')"}).status_code == 202
    run_client.post(f"/api/runs/{held[1]}/cancel")


def test_without_a_worker_runs_are_503_and_health_says_why(
    settings: Settings, tmp_path: Path
) -> None:
    gone = settings.model_copy(
        update={"sandbox_socket": tmp_path / "nobody.sock", "run_queue": RunQueueKind.local}
    )
    with TestClient(create_app(gone)) as client:
        response = client.post("/api/runs", json={"code": "print(1)"})
        assert response.status_code == 503
        assert "cannot run right now" in response.json()["detail"]
        sandbox = client.get("/api/health").json()["sandbox"]
        assert sandbox["available"] is False and "not running" in sandbox["detail"]


def test_health_lists_the_backends(run_client: TestClient) -> None:
    sandbox = run_client.get("/api/health").json()["sandbox"]
    assert sandbox["available"] is True
    assert "cpu" in sandbox["backends"] and sandbox["devices"]["cpu"]


def test_two_visitors_run_at_the_same_time(run_client: TestClient) -> None:
    results: list[dict[str, Any]] = []

    def one(n: int) -> None:
        run_id = run_client.post("/api/runs", json={"code": f"print('{n}')"}).json()["id"]
        results.append(events_of(run_client, run_id)[-1][1])

    threads = [threading.Thread(target=one, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r["stdout"] for r in results) == ["0\n", "1\n"]


def test_another_visitor_cannot_read_follow_or_cancel_a_run(run_client: TestClient) -> None:
    run_client.cookies.clear()
    run_client.cookies.set("backprop_visitor", "visitor-a")
    run_id = run_client.post(
        "/api/runs", json={"code": "print('mine')"}, headers=csrf_headers(run_client)
    ).json()["id"]
    events_of(run_client, run_id)
    run_client.cookies.clear()
    run_client.cookies.set("backprop_visitor", "visitor-b")
    assert run_client.get(f"/api/runs/{run_id}").status_code == 404
    assert run_client.get(f"/api/runs/{run_id}/events").status_code == 404
    cancel = run_client.post(f"/api/runs/{run_id}/cancel", headers=csrf_headers(run_client))
    run_client.cookies.clear()
    assert cancel.status_code == 404
    run_client.cookies.set("backprop_visitor", "visitor-a")
    assert run_client.get(f"/api/runs/{run_id}").json()["stdout"] == "mine\n"


def test_a_signed_in_users_run_counts_as_practice_on_its_item(run_client: TestClient) -> None:
    from tests.support.forms import sign_up

    sign_up(run_client, "runner")
    run_id = run_client.post(
        "/api/runs",
        json={"code": "print('hi')", "backend": "cpu", "item": "dropout", "sample": 1},
        headers=csrf_headers(run_client),
    ).json()["id"]
    assert events_of(run_client, run_id)[-1][1]["verdict"] == "ok"
    mine = run_client.get("/api/me/items/dropout").json()
    assert (mine["runs"], mine["runs_ok"], mine["status"]) == (1, 1, "practising")
    progress = run_client.get("/api/me/progress").json()
    assert progress["recent_runs"][0]["id"] == run_id and progress["streak_days"] == 1
    assert "print" not in str(progress["recent_runs"])  # the code itself is never echoed


def test_a_run_keeps_its_code_for_the_history_and_the_export(run_client: TestClient) -> None:
    from tests.support.forms import sign_up

    sign_up(run_client, "keeper")
    code = "print('kept <b>as text</b>')"
    body = {"code": code, "backend": "cpu", "item": "dropout", "sample": 1}
    run_id = run_client.post("/api/runs", json=body, headers=csrf_headers(run_client)).json()["id"]
    assert events_of(run_client, run_id)[-1][1]["verdict"] == "ok"
    escaped = "print(&#39;kept &lt;b&gt;as text&lt;/b&gt;&#39;)"
    item_page = run_client.get("/items/dropout").text
    assert "Your latest runs here" in item_page and escaped in item_page
    assert escaped in run_client.get("/dashboard").text
    exported = run_client.get("/api/me/export").json()["runs"]
    assert [(r["id"], r["code"]) for r in exported] == [(run_id, code)]


def test_runs_started_with_a_bearer_token_belong_to_that_user(run_client: TestClient) -> None:
    password = "correct horse battery"
    run_client.post("/api/users", json={"username": "apiuser", "password": password})
    token = run_client.post("/api/token", data={"username": "apiuser", "password": password})
    auth = {"Authorization": f"Bearer {token.json()['access_token']}"}
    run_id = run_client.post("/api/runs", json={"code": "print('2')"}, headers=auth).json()["id"]
    run_client.cookies.clear()
    assert run_client.get(f"/api/runs/{run_id}").status_code == 404  # not a stranger's
    assert run_client.get(f"/api/runs/{run_id}", headers=auth).status_code == 200
    export = run_client.get("/api/me/export", headers=auth).json()
    assert [r["id"] for r in export["runs"]] == [run_id]


def test_health_and_item_pages_say_starting_while_the_worker_warms_up(
    run_client: TestClient,
) -> None:
    from sandbox.protocol import WorkerState

    run_client.app.state.backprop.run_queue.state = WorkerState.STARTING  # type: ignore[attr-defined]
    sandbox = run_client.get("/api/health").json()["sandbox"]
    assert sandbox["state"] == "starting" and sandbox["available"] is False
    page = run_client.get("/items/dropout").text
    assert "starting" in page and "not running" not in page


def test_cookie_less_clients_own_their_runs_by_token_not_by_address(
    settings: Settings,
) -> None:
    with TestClient(create_app(settings)) as first:
        started = first.post("/api/runs", json={"code": "print('first')"}).json()
        token = started["token"]
        assert token and len(token) >= 24
        second = TestClient(first.app)  # the same address, no cookies, no token
        assert second.get(f"/api/runs/{started['id']}").status_code == 404
        assert second.get(f"/api/runs/{started['id']}/events").status_code == 404
        assert second.post(f"/api/runs/{started['id']}/cancel").status_code == 404
        events = events_of(first, started["id"], params={"token": token})  # as EventSource
        assert events[-1][1]["stdout"] == "first\n"
        run = first.get(f"/api/runs/{started['id']}", headers={"X-Run-Token": token})
        assert run.status_code == 200 and run.json()["stdout"] == "first\n"
        wrong = first.get(f"/api/runs/{started['id']}", headers={"X-Run-Token": "x" * 32})
        assert wrong.status_code == 404


def test_fresh_cookies_from_one_address_share_its_run_allowance(run_client: TestClient) -> None:
    held = []
    for n in range(4):
        browser = TestClient(run_client.app)
        browser.headers["X-CSRF-Token"] = csrf_token(browser)
        response = browser.post("/api/runs", json={"code": "# fake: hold"})
        assert response.status_code == 202, n
        held.append((browser, response.json()["id"]))
    another = TestClient(run_client.app)
    another.headers["X-CSRF-Token"] = csrf_token(another)
    refused = another.post("/api/runs", json={"code": "print('x')"})
    assert refused.status_code == 429 and refused.headers["Retry-After"]
    assert "from your network" in refused.json()["detail"]
    elsewhere = TestClient(run_client.app, client=("198.51.100.9", 1234))
    elsewhere.headers["X-CSRF-Token"] = csrf_token(elsewhere)
    assert elsewhere.post("/api/runs", json={"code": "print('y')"}).status_code == 202
    for browser, run_id in held:
        browser.post(f"/api/runs/{run_id}/cancel")


def test_a_cancel_after_the_run_ended_does_not_relabel_it(run_client: TestClient) -> None:
    run_id = run_client.post("/api/runs", json={"code": "print('done')"}).json()["id"]
    assert events_of(run_client, run_id)[-1][1]["verdict"] == "ok"
    assert run_client.post(f"/api/runs/{run_id}/cancel").status_code == 202
    assert run_client.get(f"/api/runs/{run_id}").json()["verdict"] == "ok"


def test_a_visitor_holds_a_bounded_number_of_open_streams(settings: Settings) -> None:
    few = settings.model_copy(update={"streams_per_visitor": 1})
    with TestClient(create_app(few)) as browser:
        browser.headers["X-CSRF-Token"] = csrf_token(browser)
        run_id = browser.post("/api/runs", json={"code": "# fake: hold"}).json()["id"]
        with browser.stream("GET", f"/api/runs/{run_id}/events") as first:
            assert first.status_code == 200
            second = browser.get(f"/api/runs/{run_id}/events")
            assert second.status_code == 429 and second.headers["Retry-After"]
            browser.post(f"/api/runs/{run_id}/cancel")
            for line in first.iter_lines():
                if line.startswith("event: result"):
                    break
        assert events_of(browser, run_id)[-1][1]["verdict"] == "killed"  # a slot again
