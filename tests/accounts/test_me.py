"""The JSON API of accounts and personal data (app/accounts/routes/me.py): users, tokens,
/api/me."""

from __future__ import annotations

from datetime import timedelta

from fastapi.testclient import TestClient
from sqlalchemy import create_engine, update
from sqlmodel import Session

from app.models import (
    ApiToken,
    utcnow,
)
from tests.support.forms import PASSWORD


def test_api_sign_up_token_and_me(client: TestClient) -> None:
    created = client.post("/api/users", json={"username": "nina", "password": PASSWORD})
    assert created.status_code == 201 and created.json()["username"] == "nina"
    assert "password" not in created.text
    token = client.post("/api/token", data={"username": "nina", "password": PASSWORD}).json()
    assert token["token_type"] == "bearer" and token["expires_in"] == 3600
    me = client.get("/api/me", headers={"Authorization": f"Bearer {token['access_token']}"})
    assert me.status_code == 200 and me.json()["username"] == "nina"


def test_api_refusals_are_clear(client: TestClient) -> None:
    weak = client.post("/api/users", json={"username": "omar", "password": "12345678"})
    assert weak.status_code == 422 and "too easy" in weak.json()["detail"]
    assert client.post("/api/users", json={"username": "omar"}).status_code == 422
    client.post("/api/users", json={"username": "omar", "password": PASSWORD})
    wrong = client.post("/api/token", data={"username": "omar", "password": "nope nope"})
    assert wrong.status_code == 401 and wrong.headers["www-authenticate"].startswith("Bearer")
    anonymous = client.get("/api/me/progress")
    assert anonymous.status_code == 401 and "bearer token" in anonymous.json()["detail"]
    bogus = client.get("/api/me", headers={"Authorization": "Bearer made-up"})
    assert bogus.status_code == 401 and "not valid" in bogus.json()["detail"]


def test_expired_tokens_are_refused(client: TestClient, database_url: str) -> None:
    client.post("/api/users", json={"username": "pia", "password": PASSWORD})
    token = client.post("/api/token", data={"username": "pia", "password": PASSWORD}).json()
    auth = {"Authorization": f"Bearer {token['access_token']}"}
    assert client.get("/api/me", headers=auth).status_code == 200
    with Session(create_engine(database_url)) as session:
        session.execute(update(ApiToken).values(expires_at=utcnow() - timedelta(seconds=1)))
        session.commit()
    expired = client.get("/api/me", headers=auth)
    assert expired.status_code == 401 and "expired" in expired.json()["detail"]


def test_personal_api_shapes_are_documented(client: TestClient) -> None:
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    assert {"ProgressPublic", "ItemProgressPublic", "UserPublic", "Token"} <= set(schemas)
    assert "continue" in schemas["ProgressPublic"]["properties"]


def test_progress_and_item_updates_through_the_api(client: TestClient) -> None:
    client.post("/api/users", json={"username": "pia", "password": PASSWORD})
    token = client.post("/api/token", data={"username": "pia", "password": PASSWORD}).json()
    auth = {"Authorization": f"Bearer {token['access_token']}"}
    changed = client.put("/api/me/items/dropout", json={"bookmarked": True}, headers=auth)
    assert changed.status_code == 200 and changed.json()["bookmarked"] is True
    progress = client.get("/api/me/progress", headers=auth).json()
    assert progress["bookmarks"][0]["slug"] == "dropout" and progress["continue"]
    assert client.put("/api/me/items/nope", json={}, headers=auth).status_code == 404
