"""The content snapshot (app/library/content_cache.py): what the library pages read is
kept, and an import is seen: at once by the process that made it, and by any other within
RECHECK_SECONDS."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from app.domain import ItemNotFound
from app.exercises import catalogue
from app.importer import import_content
from app.library import content_cache
from app.library.items import ItemFilter
from app.library.search import find


def titles(engine: Engine, q: str | None = None) -> list[str]:
    with engine.connect() as connection:
        return [h.item.title for h in find(connection, ItemFilter(deck="deep-learning", q=q)).hits]


def retitle(content: Path, new: str, file: str = "deep-learning/08-dropout.md") -> None:
    """Give the item (or exercise.yml) at `file` a new title line."""
    path = content / file
    text = path.read_text(encoding="utf-8")
    old = next(line for line in text.splitlines() if line.startswith("title:"))
    path.write_text(text.replace(old, f"title: {new}", 1), encoding="utf-8")


def test_an_import_is_seen_after_the_recheck_time(
    empty_engine: Engine, content_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import_content(empty_engine, content_copy)
    before = titles(empty_engine)
    assert "Zebra dropout" not in before and titles(empty_engine, "zebra") == []
    retitle(content_copy, "Zebra dropout")
    import_content(empty_engine, content_copy)  # as another process would
    assert titles(empty_engine) == before  # kept for up to RECHECK_SECONDS
    monkeypatch.setattr(content_cache, "RECHECK_SECONDS", 0.0)
    assert "Zebra dropout" in titles(empty_engine)
    assert [t for t in titles(empty_engine, "zebra")] == ["Zebra dropout"]


def test_forget_shows_this_processs_import_at_once(
    empty_engine: Engine, content_copy: Path
) -> None:
    import_content(empty_engine, content_copy)
    titles(empty_engine, "dropout")
    retitle(content_copy, "Yak dropout")
    import_content(empty_engine, content_copy)
    content_cache.forget(empty_engine)
    assert titles(empty_engine, "yak") == ["Yak dropout"]


def test_an_items_page_content_is_kept_until_the_next_import(
    empty_engine: Engine, content_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import_content(empty_engine, content_copy)
    with empty_engine.connect() as connection:
        first = content_cache.item_detail(connection, "dropout")
        assert content_cache.item_detail(connection, "dropout") is first  # no query again
        with pytest.raises(ItemNotFound):
            content_cache.item_detail(connection, "no-such-item")
        assert "no-such-item" not in content_cache.snapshot(connection).details
    retitle(content_copy, "Quokka dropout")
    import_content(empty_engine, content_copy)  # as another process would
    monkeypatch.setattr(content_cache, "RECHECK_SECONDS", 0.0)
    with empty_engine.connect() as connection:
        assert content_cache.item_detail(connection, "dropout").item.title == "Quokka dropout"


def test_an_import_of_exercises_alone_is_seen_after_the_recheck_time(
    empty_engine: Engine, content_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exercises are kept with the items (the list, the page and every item page read
    them), though their import changes no item file: the content's version follows them."""
    import_content(empty_engine, content_copy)
    with empty_engine.connect() as connection:
        first = catalogue.one(connection, "stable-softmax")
        assert catalogue.one(connection, "stable-softmax") is first  # no query again
    retitle(content_copy, "Zebra softmax", "exercises/stable-softmax/exercise.yml")
    report = import_content(empty_engine, content_copy)  # as another process would
    assert report.exercises == ["exercises/stable-softmax"] and not report.updated
    monkeypatch.setattr(content_cache, "RECHECK_SECONDS", 0.0)
    with empty_engine.connect() as connection:
        assert catalogue.one(connection, "stable-softmax").title == "Zebra softmax"
        listed = catalogue.listing(connection, None, query="zebra")
        assert [row.slug for row in listed] == ["stable-softmax"]
    # The exercises' row among the content files is not an item file: the next import of
    # the items leaves it, and reports nothing removed.
    assert import_content(empty_engine, content_copy).removed == []
