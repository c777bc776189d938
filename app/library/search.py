"""Full-text search over items: SQLite's FTS5 (ranked by BM25, matches highlighted), or, on
databases without it (PostgreSQL), the same matching and weights over the content's text kept
per import (content_cache)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from markupsafe import Markup
from sqlalchemy import Connection, text

from app.domain import InvalidFilter
from app.library import content_cache
from app.library.content_cache import ItemText, Ranked
from app.library.items import ItemFilter, ItemHit, ItemRow, filtered
from app.library.query import understand

MAX_QUERY_LENGTH = 200
MAX_QUERY_TERMS = 12
FEW_HITS = 3  # fewer items than this match every word: those matching any word follow
# Private-use characters mark matches inside SQLite's snippets; the text is HTML-escaped
# first and only then are the markers turned into <mark>, so content can never inject HTML.
_OPEN, _CLOSE = "\ue000", "\ue001"
# Title matches weigh most, then the explanation, then code: in both rankings.
TITLE_WEIGHT, PROSE_WEIGHT, CODE_WEIGHT = 10.0, 3.0, 1.0
_FTS = text(
    "SELECT rowid, highlight(item_search, 0, :o, :c), "
    "snippet(item_search, -1, :o, :c, '…', 16) "
    "FROM item_search WHERE item_search MATCH :m "
    f"ORDER BY bm25(item_search, {TITLE_WEIGHT}, {PROSE_WEIGHT}, {CODE_WEIGHT})"
)


def search_terms(q: str | None) -> list[str]:
    """The words of a query, as FTS5 sees them; punctuation separates words."""
    return re.findall(r"\w+", q or "")[:MAX_QUERY_TERMS]


def plain_hits(rows: Sequence[ItemRow]) -> list[ItemHit]:
    """Rows as list entries with nothing highlighted."""
    return [ItemHit(item=r, title_html=Markup(escape(r.title)), snippet_html=None) for r in rows]


def search(connection: Connection, rows: Sequence[ItemRow], terms: list[str]) -> list[ItemHit]:
    """The rows matching every term, best first, with the matches marked."""
    if not terms or not rows:
        return []
    if connection.dialect.name == "sqlite":
        return _fts_search(connection, rows, " ".join(f'"{t}"*' for t in terms))
    return _plain_search(connection, rows, terms)


def search_any(connection: Connection, rows: Sequence[ItemRow], terms: list[str]) -> list[ItemHit]:
    """The rows matching any of the terms, best first."""
    if not terms or not rows:
        return []
    if connection.dialect.name == "sqlite":
        return _fts_search(connection, rows, " OR ".join(f'"{t}"*' for t in terms))
    return _plain_search(connection, rows, terms, every=False)


def _fts_search(connection: Connection, rows: Sequence[ItemRow], match: str) -> list[ItemHit]:
    snapshot = content_cache.snapshot(connection)
    ranked = snapshot.cached_search(match)
    if ranked is None:
        found = connection.execute(_FTS, {"m": match, "o": _OPEN, "c": _CLOSE})
        ranked = [(rowid, _marked(title), _marked(snippet)) for rowid, title, snippet in found]
        snapshot.keep_search(match, ranked)
    return _allowed(ranked, rows)


def _allowed(ranked: Ranked, rows: Sequence[ItemRow]) -> list[ItemHit]:
    allowed = {r.id: r for r in rows}
    return [
        ItemHit(item=allowed[rowid], title_html=title, snippet_html=snippet)
        for rowid, title, snippet in ranked
        if rowid in allowed
    ]


def _plain_search(
    connection: Connection, rows: Sequence[ItemRow], terms: list[str], *, every: bool = True
) -> list[ItemHit]:
    """Databases without FTS5: the rows whose title, prose or code holds every term (or any,
    unless `every`) where a word starts, as FTS5's prefix queries match, best first. Ranked
    over all items once per import and query, as FTS5's answers are, then narrowed to
    `rows`."""
    snapshot = content_cache.snapshot(connection)
    key = ("every: " if every else "any: ") + " ".join(terms)  # FTS5's keys start with '"'
    ranked = snapshot.cached_search(key)
    if ranked is None:
        ranked = _plain_ranked(snapshot.rows, snapshot.texts(connection), terms, every)
        snapshot.keep_search(key, ranked)
    return _allowed(ranked, rows)


def _plain_ranked(
    rows: Sequence[ItemRow], texts: dict[int, ItemText], terms: list[str], every: bool
) -> Ranked:
    held = all if every else any
    uses = {r.id: _uses(terms, texts[r.id]) for r in rows}
    uses = {i: counts for i, counts in uses.items() if held(map(sum, counts.values()))}
    weights = _rarity(list(uses.values()), terms, len(rows))
    scored = [(_score(uses[r.id], weights), r) for r in rows if r.id in uses]
    scored.sort(key=lambda pair: (-pair[0], pair[1].deck_slug, pair[1].number))
    # The whole word a term begins is marked, as FTS5's highlight() marks its tokens.
    marks = re.compile(rf"\b(?:{'|'.join(map(re.escape, terms))})\w*", re.IGNORECASE)
    return [
        (r.id, _plain_marked(r.title, marks), _plain_snippet(texts[r.id][1], marks))
        for _, r in scored
    ]


Uses = dict[str, tuple[int, int, int]]  # term → words starting with it in title, prose, code


def _uses(terms: list[str], parts: ItemText) -> Uses:
    counts: Uses = {}
    for term in terms:
        starts = re.compile(rf"\b{re.escape(term)}", re.IGNORECASE)
        title, prose, code = (len(starts.findall(part)) for part in parts)
        counts[term] = (title, prose, code)
    return counts


def _rarity(found: list[Uses], terms: list[str], searched: int) -> dict[str, float]:
    """Each term's weight: higher the fewer of the `searched` items hold it (BM25's inverse
    document frequency), so an item holding a rare word of the query ranks above one holding
    only a common one."""
    weights = {}
    for term in terms:
        holding = sum(1 for uses in found if sum(uses[term]))
        weights[term] = math.log(1 + (searched - holding + 0.5) / (holding + 0.5))
    return weights


def _score(uses: Uses, weights: dict[str, float]) -> float:
    """How well an item matches: per term, its uses in each part with diminishing returns
    (a word's tenth use adds less than its second), the parts weighted as FTS5's ranking
    weighs them and the terms by their rarity."""
    return sum(
        rarity * weight * math.log1p(count)
        for term, rarity in weights.items()
        for count, weight in zip(uses[term], (TITLE_WEIGHT, PROSE_WEIGHT, CODE_WEIGHT), strict=True)
    )


def _plain_marked(s: str, marks: re.Pattern[str]) -> Markup:
    return _marked(marks.sub(lambda m: f"{_OPEN}{m.group(0)}{_CLOSE}", s))


def _plain_snippet(prose: str, marks: re.Pattern[str]) -> Markup | None:
    """About 200 characters of the prose around its first match (none when only code
    matched)."""
    found = marks.search(prose)
    if not found:
        return None
    start = max(0, found.start() - 80)
    return _plain_marked(("…" if start else "") + prose[start : start + 200] + "…", marks)


def _marked(s: str) -> Markup:
    return Markup(escape(s).replace(_OPEN, "<mark>").replace(_CLOSE, "</mark>"))


@dataclass(frozen=True)
class Found:
    """The library's answer: its entries, and the query as searched when a typo in it was
    corrected ("Showing results for …")."""

    hits: list[ItemHit]
    corrected: str | None = None


def find(connection: Connection, filters: ItemFilter) -> Found:
    """The library's answer to its filters: in deck order, or by relevance for a query.

    A query is forgiving (query.py): filler words are dropped, spelling variants mapped and
    typos corrected; the items matching every word come first, those whose title holds the
    most of them first among them; when few match every word, those matching any follow."""
    snapshot = content_cache.snapshot(connection)
    if filters.deck and filters.deck not in snapshot.deck_slugs:
        raise InvalidFilter(f"There is no deck called '{filters.deck}'.")
    if filters.topic and filters.topic not in snapshot.topic_slugs:
        raise InvalidFilter(f"There is no topic called '{filters.topic}'.")
    rows = filtered(snapshot.rows, filters)
    words = search_terms(filters.q)
    if filters.q and not words:
        return Found([])  # a query of punctuation or symbols alone matches nothing
    if not words:
        return Found(plain_hits(rows))
    understood = understand(words, snapshot.vocabulary(connection))
    hits = _titles_first(search(connection, rows, understood.terms), understood.terms)
    if len(hits) < FEW_HITS and len(understood.terms) > 1:
        seen = {hit.item.id for hit in hits}
        more = search_any(connection, rows, understood.terms)
        hits += [hit for hit in more if hit.item.id not in seen]
    return Found(hits, understood.corrected)


def _titles_first(hits: list[ItemHit], terms: list[str]) -> list[ItemHit]:
    """The same hits, those whose title holds more of the terms (as word prefixes) first;
    otherwise in their relevance order."""

    def in_title(hit: ItemHit) -> int:
        words = re.findall(r"\w+", hit.item.title.lower())
        return sum(any(w.startswith(t) for w in words) for t in terms)

    return sorted(hits, key=lambda hit: -in_title(hit))
