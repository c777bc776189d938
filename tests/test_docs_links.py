"""The documentation's links hold: every relative link or image in README.md, docs/*.md,
sandbox/README.md and content/README.md names a file or folder that exists, and an anchor
into a Markdown file names one of its headings (GitHub's slug). README.md stays a short
front page whose Quick start is the two commands."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

from app.settings import PROJECT_ROOT

README = PROJECT_ROOT / "README.md"
PAGES = sorted(
    [
        README,
        *(PROJECT_ROOT / "docs").glob("*.md"),
        PROJECT_ROOT / "sandbox" / "README.md",
        PROJECT_ROOT / "content" / "README.md",
    ]
)
README_MAX_LINES = 220

FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
# [text](target "title") and ![alt](target); the text may hold one level of brackets.
INLINE_LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]"  # [text], one level of nested brackets
    r"\(\s*(<[^>]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\s*\)"  # (target "title")
)
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
CODE_SPAN = re.compile(r"(`+).+?\1")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
EXTERNAL = ("http://", "https://", "mailto:")


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks."""
    kept, fence = [], ""
    for number, line in enumerate(text.split("\n"), start=1):
        opened = FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = ""
            continue
        if opened:
            fence = opened.group(1)
            continue
        kept.append((number, line))
    return kept


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text lowercased, characters other than letters,
    digits, spaces, hyphens and underscores dropped, spaces made hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link counts as its text
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        heading = HEADING.match(line)
        if heading:
            base = slug(heading.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[tuple[int, str]]:
    """(line number, target) of every link and image outside code."""
    found = []
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        line = CODE_SPAN.sub("", line)
        found += [(number, m.group(1).strip("<>")) for m in INLINE_LINK.finditer(line)]
        found += [(number, m.group(1).strip("<>")) for m in REFERENCE.finditer(line)]
    return found


def broken_links(path: Path, root: Path = PROJECT_ROOT) -> list[str]:
    """Every relative link of `path` that does not resolve, as `file:line: target (why)`."""
    problems = []
    for number, target in links(path):
        if target.lower().startswith(EXTERNAL):
            continue
        where, _, anchor = unquote(target).partition("#")
        if not where:
            dest = path
        elif where.startswith("/"):
            dest = root / where.lstrip("/")
        else:
            dest = path.parent / where
        shown = f"{path.name}:{number}: {target}"
        if not dest.exists():
            problems.append(f"{shown} (no such file or folder)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            problems.append(f"{shown} (no heading with that anchor)")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(PROJECT_ROOT).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_the_checker_catches_broken_links_and_anchors(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other\n\n## Runs through `Redis`, again\n")
    (tmp_path / "folder").mkdir()
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n"
        "[fine](other.md) [anchor](other.md#runs-through-redis-again) ![folder](folder)\n"
        "[here](#page) [web](https://example.com/x.md) `[code span](missing.md)`\n"
        "[gone](missing.md) and ![image](pics/none.png)\n"
        "[bad anchor](other.md#runs-through-redis)\n"
        "```\n[fenced](also-missing.md)\n```\n"
        "[ref]: nowhere.md\n"
    )
    assert broken_links(page, tmp_path) == [
        "page.md:5: missing.md (no such file or folder)",
        "page.md:5: pics/none.png (no such file or folder)",
        "page.md:6: other.md#runs-through-redis (no heading with that anchor)",
        "page.md:10: nowhere.md (no such file or folder)",
    ]


def test_slugs_follow_github() -> None:
    assert slug("Docker, and more than one machine") == "docker-and-more-than-one-machine"
    assert slug("The item page's request path") == "the-item-pages-request-path"
    assert slug("Exercises: `exercises/<slug>/`") == "exercises-exercisesslug"
    assert slug("torch.compile labs") == "torchcompile-labs"


@pytest.mark.parametrize(
    "page",
    sorted((PROJECT_ROOT / "docs").glob("*.md")),
    ids=lambda p: p.name,
)
def test_every_docs_page_opens_with_a_title_and_a_sentence(page: Path) -> None:
    lines = page.read_text(encoding="utf-8").split("\n")
    assert lines[0].startswith("# "), "the first line is the page's title"
    first = next(line for line in lines[1:] if line.strip())
    assert first[0].isalnum() or first[0] in "`[", "a sentence saying what the page covers"


def test_the_readme_is_a_short_front_page() -> None:
    lines = README.read_text(encoding="utf-8").split("\n")
    assert len(lines) <= README_MAX_LINES, "README.md is the front page: details go to docs/"


def test_the_quick_start_is_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    quick_start = text.split("\n## Quick start\n", 1)[1]
    block = re.search(r"^```\w*\n(.*?)^```", quick_start, re.M | re.S)
    assert block, "the Quick start opens with a code block"
    assert quick_start.index(block.group(0)) < quick_start.find("\n## "), "in the Quick start"
    commands = [line.split("#")[0].strip() for line in block.group(1).strip().split("\n")]
    assert commands == [".ci/serve", ".ci/run"]
