"""A guest's hints and reveals follow it into its account, once each; the export lists
the hints shown."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.models import HintView, SolutionReveal
from tests.support.forms import sign_in, sign_up
from tests.support.grading import scripted

SOFTMAX, GELU = "stable-softmax", "gelu-autograd-function"


def test_a_guests_hints_become_the_new_accounts(client: TestClient) -> None:
    client = scripted(client)
    client.post(f"/api/exercises/{SOFTMAX}/hints")
    client.post(f"/api/exercises/{SOFTMAX}/solution", json={"give_up": True})
    sign_up(client, "carried")
    client = scripted(client)
    shown = client.get(f"/api/exercises/{SOFTMAX}/hints").json()["shown"]
    assert [h["index"] for h in shown] == [0]
    exported = client.get("/api/me/export").json()
    assert [
        (h["exercise"], h["hint"], h["level"], h["category"]) for h in exported["hints_shown"]
    ] == [(SOFTMAX, 0, "concept", "edge cases")]
    assert [r["exercise"] for r in exported["solution_reveals"]] == [SOFTMAX]
    download = client.get("/account/export")
    assert download.status_code == 200 and '"hints_shown"' in download.text


def test_signing_in_merges_a_guests_hints_keeping_each_once(
    client: TestClient, engine: Engine
) -> None:
    sign_up(client, "merger")
    client = scripted(client)
    client.post(f"/api/exercises/{SOFTMAX}/hints")  # the account sees hint 0
    client.cookies.clear()  # a guest on the same device
    client = scripted(client)
    client.post(f"/api/exercises/{SOFTMAX}/hints")  # hint 0 again, as a guest
    client.post(f"/api/exercises/{SOFTMAX}/hints")  # and hint 1
    client.post(f"/api/exercises/{GELU}/hints")
    client.post(f"/api/exercises/{GELU}/solution", json={"give_up": True})
    assert sign_in(client, "merger") == 303
    client = scripted(client)
    shown = client.get(f"/api/exercises/{SOFTMAX}/hints").json()["shown"]
    assert [h["index"] for h in shown] == [0, 1]
    assert [h["index"] for h in client.get(f"/api/exercises/{GELU}/hints").json()["shown"]] == [0]
    assert client.get(f"/api/exercises/{GELU}/solution").status_code == 200
    with Session(engine) as session:
        hints = session.exec(select(HintView)).all()
        reveals = session.exec(select(SolutionReveal)).all()
    assert len(hints) == 3 and len({h.learner_id for h in hints}) == 1
    assert len(reveals) == 1 and reveals[0].learner_id == hints[0].learner_id
