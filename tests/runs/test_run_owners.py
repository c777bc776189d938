"""Whom a run counts against and whom the sandbox schedules it as: a guest's runs by the
client's address (fresh cookies and cookie-less programs from one address are one owner),
a signed-in user's by the account, with an allowance of its own even behind a busy
address. The runs are scripted (app/runqueue/fake.py)."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.models import Run
from app.runs.runs import fair_owner
from tests.support.forms import csrf_token, sign_up

HOLD = "# fake: hold"


def browser(app: object, address: str = "testclient") -> TestClient:
    """A fresh browser (a cookie of its own) from `address`, with its page's CSRF token."""
    client = TestClient(app, client=(address, 1234))  # type: ignore[arg-type]
    client.headers["X-CSRF-Token"] = csrf_token(client)
    return client


def program(app: object, address: str = "testclient") -> TestClient:
    """A cookie-less API client from `address`."""
    return TestClient(app, client=(address, 1234))  # type: ignore[arg-type]


def stored(engine: Engine, run_id: str) -> Run:
    with Session(engine) as session:
        run = session.get(Run, run_id)
    assert run is not None
    return run


def test_two_cookie_less_programs_behind_one_address_share_its_allowance(
    client: TestClient,
) -> None:
    first, second = program(client.app), program(client.app)
    held = [first.post("/api/runs", json={"code": HOLD}).json() for _ in range(2)]
    refused = second.post("/api/runs", json={"code": "print('x')"})
    assert refused.status_code == 429 and "You already have 2 runs going" in refused.text
    elsewhere = program(client.app, "198.51.100.9").post("/api/runs", json={"code": "print(1)"})
    assert elsewhere.status_code == 202
    for run in held:
        first.post(f"/api/runs/{run['id']}/cancel", headers={"X-Run-Token": run["token"]})


def test_signing_in_gives_an_allowance_of_its_own_behind_a_busy_address(
    client: TestClient, engine: Engine
) -> None:
    guests = [browser(client.app) for _ in range(4)]
    held = [guest.post("/api/runs", json={"code": HOLD}).json()["id"] for guest in guests]
    another = browser(client.app)
    assert another.post("/api/runs", json={"code": "print('x')"}).status_code == 429
    sign_up(another, "behind-a-busy-address")
    another.headers["X-CSRF-Token"] = csrf_token(another)
    started = another.post("/api/runs", json={"code": "print('mine')"})
    assert started.status_code == 202, started.text
    run = stored(engine, started.json()["id"])
    assert run.client_sha256 is None  # it does not use up the address's allowance either
    for guest, run_id in zip(guests, held, strict=True):
        guest.post(f"/api/runs/{run_id}/cancel")


def test_the_sandbox_schedules_a_guest_by_address_and_a_user_by_account(
    client: TestClient, engine: Engine
) -> None:
    run_ids = {
        "cookie": browser(client.app).post("/api/runs", json={"code": "print(1)"}),
        "other cookie": browser(client.app).post("/api/runs", json={"code": "print(2)"}),
        "no cookie": program(client.app).post("/api/runs", json={"code": "print(3)"}),
        "elsewhere": program(client.app, "198.51.100.9").post(
            "/api/runs", json={"code": "print(4)"}
        ),
    }
    user = browser(client.app)
    sign_up(user, "scheduled-as-an-account")
    user.headers["X-CSRF-Token"] = csrf_token(user)
    run_ids["user"] = user.post("/api/runs", json={"code": "print(5)"})
    owners = {name: stored(engine, r.json()["id"]).fair_owner for name, r in run_ids.items()}
    assert owners["cookie"] == owners["other cookie"] == owners["no cookie"]
    assert len({owners["cookie"], owners["elsewhere"], owners["user"]}) == 3
    secret = client.app.state.backprop.settings.resolved_secret_key()  # type: ignore[attr-defined]
    assert owners["cookie"] == fair_owner(secret, "addr:testclient")  # keyed, never the address
    submitted = client.app.state.backprop.run_queue.submitted  # type: ignore[attr-defined]
    sent = {request.id: request.owner for request in submitted}
    assert all(sent[r.json()["id"]] == owners[name] for name, r in run_ids.items())
