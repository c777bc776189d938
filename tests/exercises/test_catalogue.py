"""Code exercises in the JSON API and the pages: the list with its filters, one exercise
(never its reference, hidden tests or mutants), the item links and the solution reveal."""

from __future__ import annotations

import yaml
from fastapi.testclient import TestClient

from app.settings import PROJECT_ROOT
from tests.support.forms import csrf_headers, sign_up

EXERCISES = PROJECT_ROOT / "content" / "exercises"
SLUG = "stable-softmax"


def test_the_list_has_every_exercise_with_its_metadata(client: TestClient) -> None:
    listed = client.get("/api/exercises").json()
    folders = sorted(p.name for p in EXERCISES.iterdir() if p.is_dir())
    assert sorted(e["slug"] for e in listed) == folders
    softmax = next(e for e in listed if e["slug"] == SLUG)
    assert softmax == {
        "slug": SLUG,
        "title": "Softmax and log-softmax that never overflow",
        "topic": "foundations",
        "difficulty": "easy",
        "items": ["activation-functions", "loss-functions", "nan-loss-debugging"],
        "entry_point": "softmax",
        "status": "new",
    }


def test_the_list_goes_by_topic_then_difficulty_then_title(client: TestClient) -> None:
    """As a learner scans it: decks.yml's topics in their order, easy before hard within
    one, then by title; not the folders' names."""
    decks = yaml.safe_load((PROJECT_ROOT / "content" / "decks.yml").read_text())
    topic_rank = {t["slug"]: n for n, t in enumerate(decks["topics"])}
    level = {"easy": 0, "medium": 1, "hard": 2}
    listed = client.get("/api/exercises").json()
    keys = [(topic_rank[e["topic"]], level[e["difficulty"]], e["title"].lower()) for e in listed]
    assert keys == sorted(keys)
    assert [e["slug"] for e in listed] != sorted(e["slug"] for e in listed)


def test_the_list_filters_by_topic_difficulty_and_status(client: TestClient) -> None:
    easy = client.get("/api/exercises", params={"difficulty": "easy"}).json()
    assert easy and all(e["difficulty"] == "easy" for e in easy)
    found = client.get("/api/exercises", params={"topic": "foundations"}).json()
    assert all(e["topic"] == "foundations" for e in found) and SLUG in {e["slug"] for e in found}
    assert client.get("/api/exercises", params={"status": "solved"}).json() == []
    assert client.get("/api/exercises", params={"difficulty": "trivial"}).status_code == 422


def test_a_search_finds_words_in_titles_and_statements_title_matches_first(
    client: TestClient,
) -> None:
    """Every word must be found; a word of the statement finds an exercise whose title lacks
    it, listed after those that have every word in their title."""

    def searched(slug: str) -> str:
        shown = client.get(f"/api/exercises/{slug}").json()
        return " ".join((shown["title"], shown["entry_point"], shown["statement_markdown"]))

    found = client.get("/api/exercises", params={"q": "Softmax"}).json()
    slugs = [e["slug"] for e in found]
    assert SLUG in slugs
    titled = [e for e in found if "softmax" in e["title"].casefold()]
    assert found[: len(titled)] == titled
    # "overflow" is in stable-softmax's statement and title; "log-softmax" narrows further.
    both = client.get("/api/exercises", params={"q": "overflow  LOG-SOFTMAX"}).json()
    assert SLUG in {e["slug"] for e in both}
    for e in both:
        text = searched(e["slug"]).casefold()
        assert "overflow" in text and "log-softmax" in text
    assert len(both) < len(found) or len(found) == 1
    # A word only in a statement (not in the title) still finds it.
    body_only = "generator"
    hits = {e["slug"] for e in client.get("/api/exercises", params={"q": body_only}).json()}
    assert "inverted-dropout" in hits
    assert "generator" not in client.get("/api/exercises/inverted-dropout").json()["title"]
    assert client.get("/api/exercises", params={"q": "zzz-no-such-word"}).json() == []
    narrowed = client.get("/api/exercises", params={"q": "softmax", "difficulty": "hard"}).json()
    assert all(e["difficulty"] == "hard" for e in narrowed)
    assert client.get("/api/exercises", params={"q": "x" * 201}).status_code == 422


def test_the_page_searches_and_says_when_nothing_matches(client: TestClient) -> None:
    page = client.get("/exercises", params={"q": "softmax"})
    assert page.status_code == 200
    assert f'href="/exercises/{SLUG}"' in page.text
    assert 'value="softmax"' in page.text and "Clear search and filters" in page.text
    empty = client.get("/exercises", params={"q": "zzz-no-such-word", "difficulty": "easy"})
    assert "No exercise matches “zzz-no-such-word” with these filters." in empty.text
    fragment = client.get("/exercises", params={"q": "dropout"}, headers={"HX-Request": "true"})
    assert 'id="results"' in fragment.text and "inverted-dropout" in fragment.text
    assert "<html" not in fragment.text
    assert client.get("/exercises", params={"q": "y" * 201}).status_code == 422


def test_one_exercise_never_shows_the_reference_hidden_tests_or_mutants(
    client: TestClient,
) -> None:
    answer = client.get(f"/api/exercises/{SLUG}")
    assert answer.status_code == 200
    body = answer.json()
    folder = EXERCISES / SLUG
    assert body["starter_code"] == (folder / "starter.py").read_text()
    assert body["backends"] == ["cpu", "cuda"]
    names = [t["name"] for t in body["visible_tests"]]
    assert names[0] == "softmax of small rows" and "computes softmax itself" in names
    assert "rows hundreds apart" not in names  # a hidden test
    text = answer.text
    for secret in ("reference", "mutants", "DECLARATIONS"):
        assert secret not in text
    reference_body = (folder / "reference.py").read_text().split("def softmax", 1)[1][:200]
    assert reference_body not in text
    assert client.get("/api/exercises/no-such-thing").status_code == 404


def test_the_pages_list_filter_and_show_an_exercise(client: TestClient) -> None:
    page = client.get("/exercises")
    assert page.status_code == 200
    assert 'href="/exercises" aria-current="page">Exercises</a>' in page.text
    assert f'href="/exercises/{SLUG}"' in page.text
    hard = client.get("/exercises", params={"difficulty": "hard", "topic": ""})
    assert f'href="/exercises/{SLUG}"' not in hard.text
    assert client.get("/exercises", params={"status": "bogus"}).status_code in (400, 422)
    detail = client.get(f"/exercises/{SLUG}")
    assert detail.status_code == 200
    assert "Softmax and log-softmax that never overflow" in detail.text
    assert 'href="/items/activation-functions"' in detail.text
    assert "softmax of small rows" in detail.text
    assert client.get("/exercises/nope").status_code == 404


def test_revealing_the_solution_returns_it_and_records_the_reveal(client: TestClient) -> None:
    sign_up(client, "revealer")
    headers = csrf_headers(client)
    answer = client.post(f"/api/exercises/{SLUG}/solution", json={"give_up": True}, headers=headers)
    assert answer.status_code == 200
    body = answer.json()
    assert body["code"] == (EXERCISES / SLUG / "reference.py").read_text()
    assert body["editorial_markdown"] == (EXERCISES / SLUG / "editorial.md").read_text()
    exported = client.get("/api/me/export").json()
    assert [r["exercise"] for r in exported["solution_reveals"]] == [SLUG]
    assert client.post("/api/exercises/nope/solution", headers=headers).status_code == 404


def test_an_item_page_links_to_the_exercises_that_drill_it(client: TestClient) -> None:
    page = client.get("/items/activation-functions").text
    assert f'href="/exercises/{SLUG}"' in page and "Write it yourself" in page
    # The one item with nothing to write says why instead (content/items_without_exercises.yml).
    without = client.get("/items/pytorch-vs-tensorflow").text
    assert "Write it yourself" not in without and "Nothing to write here" in without


def test_an_accounts_draft_follows_it_and_a_guest_keeps_its_own(client: TestClient) -> None:
    url = f"/exercises/{SLUG}/draft"
    guest = client.post(
        url, data={"code": "x = 1"}, headers=csrf_headers(client), follow_redirects=False
    )
    assert guest.status_code in (303, 401)  # a guest's draft stays in its browser
    assert 'data-drafts="browser"' in client.get(f"/exercises/{SLUG}").text
    sign_up(client, "drafter")
    headers = csrf_headers(client)
    assert (
        client.post(url, data={"code": "def softmax(x, dim): <mine>"}, headers=headers).status_code
        == 204
    )
    page = client.get(f"/exercises/{SLUG}").text
    assert 'data-drafts="account"' in page and 'id="exercise-draft"' in page
    assert "def softmax(x, dim): \\u003cmine\\u003e" in page  # JSON, never markup
    assert client.post(f"{url}/discard", headers=headers).status_code == 204
    assert 'id="exercise-draft"' not in client.get(f"/exercises/{SLUG}").text
    assert (
        client.post("/exercises/nope/draft", data={"code": "x"}, headers=headers).status_code == 404
    )


def test_an_exercise_page_shows_how_its_tests_were_proven(client: TestClient) -> None:
    """The suite's record, from the mutation runner's mutation.json and the folder: counts
    and a date, never a mutant or a test."""
    import json

    record = json.loads((EXERCISES / SLUG / "mutation.json").read_text())
    page = client.get(f"/exercises/{SLUG}")
    assert "How these tests were proven" in page.text
    judged = record["made"] - record["equivalent"]
    assert f"<strong>{record['killed']} of {judged}</strong> automatic mutants" in page.text
    assert f"on every one of {len(record['seeds'])} seeds" in page.text
    assert f"Last proven on {record['proven']}" in page.text
    assert "<strong>3</strong> correct solutions written differently" in page.text
    for survivor in record["survived"]:
        assert survivor["id"] not in page.text


def test_the_exercise_pages_refuse_a_bad_query_with_a_page_that_says_why(
    client: TestClient,
) -> None:
    """The list and the page read their query strings themselves (plain routes): a value
    refused is a 422 page naming it, as FastAPI's validation was, and nothing else changes."""
    too_long = client.get("/exercises", params={"q": "x" * 201})
    assert too_long.status_code == 422 and "at most 200 characters" in too_long.text
    unknown = client.get("/exercises", params={"topic": "nope"})
    assert unknown.status_code == 422 and "Topic must be one of" in unknown.text
    review = client.get(f"/exercises/{SLUG}", params={"review": "maybe"})
    assert review.status_code == 422 and "review" in review.text
    assert client.get(f"/exercises/{SLUG}", params={"review": "1"}).status_code == 200
    assert client.get("/exercises/no-such-exercise").status_code == 404
