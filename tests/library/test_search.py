"""Full-text search: ranked, highlighted, safe with any input, combined with filters."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine

from app.library.items import ItemFilter, all_rows
from app.library.search import FEW_HITS, _plain_search, find


def hits(engine: Engine, **filters: object) -> list:
    with engine.connect() as connection:
        return find(connection, ItemFilter(**filters)).hits  # type: ignore[arg-type]


def test_title_match_ranks_first(engine: Engine) -> None:
    results = hits(engine, q="dropout")
    assert results[0].item.slug == "dropout"


def test_matches_are_highlighted_in_title_and_snippet(engine: Engine) -> None:
    top = hits(engine, q="vanishing")[0]
    assert "<mark>" in top.title_html or "<mark>" in (top.snippet_html or "")
    assert top.snippet_html is not None and "<mark>" in top.snippet_html


def test_prefix_search_finds_longer_words(engine: Engine) -> None:
    slugs = {h.item.slug for h in hits(engine, q="normaliz")}
    assert "batch-normalization" in slugs


def test_search_covers_code(engine: Engine) -> None:
    slugs = {h.item.slug for h in hits(engine, q="clip_grad_norm_")}
    assert "vanishing-exploding-gradients" in slugs


def test_every_word_must_match(engine: Engine) -> None:
    both = {h.item.slug for h in hits(engine, q="dropout batchnorm")}
    dropout = {h.item.slug for h in hits(engine, q="dropout")}
    batchnorm = {h.item.slug for h in hits(engine, q="batchnorm")}
    assert both
    assert both <= dropout and both <= batchnorm
    assert both != dropout


@pytest.mark.parametrize("query", ["—", "???", "😀", "  ", "..."])
def test_a_query_without_words_matches_nothing(engine: Engine, query: str) -> None:
    if query.strip():
        assert hits(engine, q=query) == []


def test_the_fallback_matches_underscores_and_searches_code(engine: Engine) -> None:
    with engine.connect() as connection:
        rows = all_rows(connection)
        code_hits = {h.item.slug for h in _plain_search(connection, rows, ["clip_grad_norm_"])}
        wildcard = _plain_search(connection, rows, ["no_such"])
    assert "vanishing-exploding-gradients" in code_hits
    assert wildcard == []


@pytest.mark.parametrize(
    ("word", "first"),
    [
        ("dropout", "dropout"),
        ("lstm", "rnns-and-lstms"),
        ("warmup", "learning-rate-scheduling"),
        ("adam", "optimizers-sgd-momentum-rmsprop-adam"),
        ("he", "weight-initialization"),  # a short word: where words start, not inside them
    ],
)
def test_the_fallback_ranks_as_full_text_search_does(engine: Engine, word: str, first: str) -> None:
    # PostgreSQL's search: the item holding the word most, where it weighs most, comes first
    # (the same as FTS5's BM25 on SQLite), not the first in deck order.
    with engine.connect() as connection:
        assert _plain_search(connection, all_rows(connection), [word])[0].item.slug == first


def test_the_fallback_marks_the_whole_word_a_term_begins(engine: Engine) -> None:
    with engine.connect() as connection:
        [top, *_] = _plain_search(connection, all_rows(connection), ["gpu"])
    assert "<mark>GPUs</mark>" in top.title_html + (top.snippet_html or "")


def test_the_fallback_finds_words_that_start_with_a_term_not_ones_that_hold_it(
    engine: Engine,
) -> None:
    with engine.connect() as connection:
        rows = all_rows(connection)
        assert _plain_search(connection, rows, ["forward"])  # in many items' prose and code
        assert _plain_search(connection, rows, ["ward"]) == []  # no word starts with it


def test_when_few_items_hold_every_word_those_holding_any_follow(engine: Engine) -> None:
    every = hits(engine, q="memory leak gpu")
    assert len(every) >= FEW_HITS
    each = [{h.item.slug for h in hits(engine, q=word)} for word in ("memory", "leak", "gpu")]
    assert {h.item.slug for h in every} == set.union(*each)


@pytest.mark.parametrize(
    "query", ['"', "AND OR NOT", "*", "(((", "title:foo", "NEAR(a b)", "';--", "a" * 200, "😀"]
)
def test_any_input_is_safe(engine: Engine, query: str) -> None:
    hits(engine, q=query)  # must not raise


def test_snippets_escape_content(engine: Engine) -> None:
    # Code and prose contain <, > and &; the snippet must carry them as text, not markup.
    for hit in hits(engine, q="torch"):
        snippet = str(hit.snippet_html or "")
        assert "<" not in snippet.replace("<mark>", "").replace("</mark>", "")


def test_search_combines_with_filters(engine: Engine) -> None:
    results = hits(engine, q="gradient", deck="pytorch-essentials")
    assert results
    assert {h.item.deck_slug for h in results} == {"pytorch-essentials"}


def test_htmx_search_returns_ranked_fragment(client: TestClient) -> None:
    response = client.get("/items", params={"q": "backpropagation"}, headers={"HX-Request": "true"})
    assert response.template.name == "items/_results.html"  # type: ignore[attr-defined]
    assert "<mark>" in response.text
    assert "best match first" in response.text
