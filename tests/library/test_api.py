"""The JSON API: health, item list with filters, one item; errors as JSON."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_health_reports_database_and_sandbox(client: TestClient) -> None:
    body = client.get("/api/health").json()
    assert body["status"] == "ok"
    assert body["database"] == "ok"
    assert set(body["sandbox"]) >= {"backends", "device", "available"}


def test_items_lists_the_38_deep_learning_questions_in_order(client: TestClient) -> None:
    items = client.get("/api/items", params={"deck": "deep-learning"}).json()
    assert [i["number"] for i in items] == list(range(1, 39))
    assert set(items[0]) == {"deck", "number", "slug", "title", "topic", "difficulty"}
    assert items[0]["title"] == (
        "What is a neural network and how does forward propagation work mathematically?"
    )


def test_items_filters_by_topic_and_query(client: TestClient) -> None:
    items = client.get("/api/items", params={"topic": "architectures", "q": "attention"}).json()
    assert items and all(i["topic"] == "architectures" for i in items)
    assert items[0]["slug"] == "self-attention-transformers"


def test_item_has_markdown_samples_and_prompts_but_no_answers(client: TestClient) -> None:
    body = client.get("/api/items/activation-functions").json()
    assert body["number"] == 3 and body["deck"] == "deep-learning"
    assert "| Function | Formula |" in body["body_markdown"]
    assert body["code_samples"][0]["index"] == 1
    assert body["code_samples"][0]["code"].startswith("import torch")
    assert body["code_samples"][0]["requires"] == []
    assert body["quiz_prompts"] == [
        "Why did sigmoid/tanh activations cause problems in deep networks?",
        "What is the 'dying ReLU' problem?",
    ]
    assert "answer" not in str(sorted(body)).lower()


def test_sample_requirements_are_exposed(client: TestClient) -> None:
    body = client.get("/api/items/transfer-learning-fine-tuning").json()
    assert "network" in body["code_samples"][0]["requires"]


def test_unknown_slug_is_404_json(client: TestClient) -> None:
    response = client.get("/api/items/nope")
    assert response.status_code == 404
    assert response.json() == {"detail": "No item is called 'nope'."}


def test_bad_query_values_are_422(client: TestClient) -> None:
    assert client.get("/api/items", params={"difficulty": "easy"}).status_code == 422
    assert client.get("/api/items", params={"q": "x" * 201}).status_code == 422
    response = client.get("/api/items", params={"topic": "cooking"})
    assert response.status_code == 422
    assert "no topic called" in response.json()["detail"]


def test_openapi_documents_the_api(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    assert {"/api/health", "/api/items", "/api/items/{slug}"} <= set(spec["paths"])
    assert client.get("/docs").status_code == 200


def test_health_is_503_when_the_database_is_unreachable(client: TestClient) -> None:
    from sqlalchemy import create_engine

    # A file below /dev/null can never be opened.
    client.app.state.backprop.engine = create_engine("sqlite:////dev/null/x.db")  # type: ignore[attr-defined]
    response = client.get("/api/health")
    assert response.status_code == 503
    assert response.json()["status"] == "degraded"


def test_query_of_punctuation_returns_no_items(client: TestClient) -> None:
    assert client.get("/api/items", params={"q": "???"}).json() == []
