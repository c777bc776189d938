"""The corrections the items carry beside their source text, gathered into one list for
content/README.md: which item, what was wrong (a correction's first sentence says it) and how
it was checked (its closing `*Checked:*` paragraph).

A correction is a blockquote whose first line starts with `> **Correction:**` (the renderer
shows it as a correction note); it runs while the lines start with `>`."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from app.importer.readme_section import with_section

README_START = "<!-- corrections:start -->"
README_END = "<!-- corrections:end -->"
OPENING = "**Correction:**"
CHECKED = "*Checked:*"
ITEM_FILE = re.compile(r"^(\d+)-([a-z0-9-]+)\.md$")
# Abbreviations whose full stop does not end a sentence.
ABBREVIATIONS = ("e.g.", "i.e.", "vs.", "etc.", "cf.", "approx.")


@dataclass(frozen=True)
class Correction:
    deck: str
    number: int
    slug: str
    line: int  # where the blockquote starts in the item file, from 1
    wrong: str  # the correction's first sentence, the "**Correction:**" label left out
    checked: str | None  # the `*Checked:*` paragraph, label left out; None when missing


def _blockquotes(lines: list[str]) -> Iterator[tuple[int, list[str]]]:
    """(first line number, the quote's lines without their `>` marks) of each correction.
    A quote may be indented (inside a list item): its lines then carry the same indent."""
    n = 0
    while n < len(lines):
        if not lines[n].lstrip().startswith(f"> {OPENING}"):
            n += 1
            continue
        start, quoted = n + 1, []
        while n < len(lines) and lines[n].lstrip().startswith(">"):
            quoted.append(lines[n].lstrip()[1:].removeprefix(" "))
            n += 1
        yield start, quoted


def _paragraphs(quoted: list[str]) -> list[str]:
    paragraphs: list[str] = []
    current: list[str] = []
    for line in [*quoted, ""]:
        if line.strip():
            current.append(line.strip())
        elif current:
            paragraphs.append(" ".join(current))
            current = []
    return paragraphs


def first_sentence(text: str) -> str:
    """Up to the first full stop, question or exclamation mark that ends a sentence: one
    followed by a space, outside a code span, and not an abbreviation's."""
    in_code = False
    for i, char in enumerate(text):
        if char == "`":
            in_code = not in_code
        elif (
            char in ".?!"
            and not in_code
            and text[i + 1 : i + 2] in (" ", "")
            and not text[: i + 1].endswith(ABBREVIATIONS)
        ):
            return text[: i + 1]
    return text


def corrections_in(text: str, *, deck: str, number: int, slug: str) -> list[Correction]:
    found = []
    for line, quoted in _blockquotes(text.split("\n")):
        paragraphs = _paragraphs(quoted)
        opening = paragraphs[0].removeprefix(OPENING).strip()
        checked = [p.removeprefix(CHECKED).strip() for p in paragraphs[1:] if p.startswith(CHECKED)]
        found.append(
            Correction(
                deck=deck,
                number=number,
                slug=slug,
                line=line,
                wrong=first_sentence(opening),
                checked=checked[-1] if checked else None,
            )
        )
    return found


def load_corrections(content_dir: Path) -> list[Correction]:
    """Every correction of every deck, in deck folder and item order."""
    found = []
    for path in sorted(content_dir.glob("*/*.md")):
        match = ITEM_FILE.match(path.name)
        if not match:
            continue
        found += corrections_in(
            path.read_text(encoding="utf-8"),
            deck=path.parent.name,
            number=int(match.group(1)),
            slug=match.group(2),
        )
    return found


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def list_markdown(corrections: list[Correction]) -> str:
    """The README's list: a count per deck, then one row per correction."""
    decks: dict[str, int] = {}
    for c in corrections:
        decks[c.deck] = decks.get(c.deck, 0) + 1
    counts = ", ".join(f"{deck} {n}" for deck, n in decks.items())
    rows = [
        f"{len(corrections)} corrections: {counts}.",
        "",
        "| item | what was wrong | how it was checked |",
        "|---|---|---|",
    ]
    for c in corrections:
        where = f"{c.deck} {c.number}, `{c.slug}`"
        rows.append(f"| {where} | {_cell(c.wrong)} | {_cell(c.checked or '(not said)')} |")
    return "\n".join(rows)


def with_list(readme: str, table: str, *, where: str = "content/README.md") -> str:
    """`readme` with the text between the corrections markers replaced by `table`."""
    return with_section(readme, table, start=README_START, end=README_END, where=where)
