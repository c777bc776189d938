"""Read one content file (YAML front matter + Markdown body) and check it against the format
documented in content/README.md. Knows nothing about the database."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML

from app.domain import Difficulty, Requirement
from app.importer.errors import ContentError
from app.importer.questions import QuestionSpec

DIFFICULTIES = tuple(d.value for d in Difficulty)
REQUIREMENTS = tuple(r.value for r in Requirement)
REQUIRED_KEYS = ("deck", "number", "slug", "title", "topic", "difficulty")
OPTIONAL_KEYS = ("tags", "section", "source", "quiz_prompts", "measures")
SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@dataclass(frozen=True)
class SampleSpec:
    """A python fence as written: its code and attributes."""

    index: int
    code: str
    requires: tuple[str, ...]
    variant_of: int | None
    line: int


@dataclass(frozen=True)
class DeckSpec:
    slug: str
    title: str
    description: str


@dataclass(frozen=True)
class TopicSpec:
    slug: str
    title: str


@dataclass(frozen=True)
class Catalogue:
    """decks.yml: the decks and topics items may name."""

    decks: tuple[DeckSpec, ...]
    topics: tuple[TopicSpec, ...]


@dataclass
class ParsedItem:
    """Everything one item file says, checked."""

    path: str
    deck: str
    number: int
    slug: str
    title: str
    topic: str
    difficulty: str
    tags: list[str]
    section: str | None
    source: str | None
    quiz_prompts: list[str]
    body: str
    samples: list[SampleSpec] = field(default_factory=list)
    questions: list[QuestionSpec] = field(default_factory=list)  # from the file beside
    measures: list[str] = field(default_factory=list)  # a lab: the items whose claims it times


def parse_catalogue(path: Path, rel: str) -> Catalogue:
    """Parse decks.yml."""
    data = _load_yaml(path.read_text(encoding="utf-8"), rel, first_line=1)
    if not isinstance(data, dict) or set(data) != {"decks", "topics"}:
        raise ContentError(rel, 1, "expected exactly the keys 'decks' and 'topics'")
    decks = tuple(
        DeckSpec(**_entry(e, rel, ("slug", "title", "description"))) for e in data["decks"] or []
    )
    topics = tuple(TopicSpec(**_entry(e, rel, ("slug", "title"))) for e in data["topics"] or [])
    for kind, slugs in (("deck", [d.slug for d in decks]), ("topic", [t.slug for t in topics])):
        dupes = {s for s in slugs if slugs.count(s) > 1}
        if dupes:
            raise ContentError(rel, 1, f"{kind} slug listed twice: {sorted(dupes)[0]}")
    return Catalogue(decks=decks, topics=topics)


def _entry(entry: Any, rel: str, keys: tuple[str, ...]) -> dict[str, str]:
    if not isinstance(entry, dict) or set(entry) != set(keys):
        raise ContentError(rel, 1, f"each entry needs exactly {', '.join(keys)}: got {entry!r}")
    if not SLUG_RE.match(str(entry["slug"])):
        raise ContentError(rel, 1, f"bad slug {entry['slug']!r}")
    return {k: str(entry[k]).strip() for k in keys}


def parse_item(text: str, rel: str, catalogue: Catalogue) -> ParsedItem:
    """Parse and check one item file; `rel` is its path relative to the content folder."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise ContentError(rel, 1, "file must start with a '---' front matter line")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise ContentError(rel, 1, "front matter is not closed by a '---' line") from None
    front_text = "\n".join(lines[1:end])
    meta = _load_yaml(front_text, rel, first_line=2)
    if not isinstance(meta, dict):
        raise ContentError(rel, 2, "front matter must be a mapping of keys to values")

    def line_of(key: str) -> int:
        for i, line in enumerate(lines[1:end], start=2):
            if line.startswith(f"{key}:"):
                return i
        return 2

    unknown = sorted(set(meta) - set(REQUIRED_KEYS) - set(OPTIONAL_KEYS))
    if unknown:
        raise ContentError(rel, line_of(unknown[0]), f"unknown key '{unknown[0]}'")
    for key in REQUIRED_KEYS:
        if meta.get(key) in (None, ""):
            raise ContentError(rel, 2, f"missing required key '{key}'")

    deck, slug, topic = str(meta["deck"]), str(meta["slug"]), str(meta["topic"])
    folder = Path(rel).parent.name
    if deck != folder:
        raise ContentError(rel, line_of("deck"), f"deck '{deck}' does not match folder '{folder}'")
    if deck not in {d.slug for d in catalogue.decks}:
        raise ContentError(rel, line_of("deck"), f"deck '{deck}' is not declared in decks.yml")
    if topic not in {t.slug for t in catalogue.topics}:
        raise ContentError(rel, line_of("topic"), f"topic '{topic}' is not declared in decks.yml")
    number = meta["number"]
    if not isinstance(number, int) or isinstance(number, bool) or number < 1:
        raise ContentError(rel, line_of("number"), "number must be a positive integer")
    if not SLUG_RE.match(slug):
        raise ContentError(rel, line_of("slug"), f"slug '{slug}' must be lowercase-with-hyphens")
    expected_name = f"{number:02d}-{slug}.md"
    if Path(rel).name != expected_name:
        raise ContentError(rel, 1, f"file name must be '{expected_name}' (number and slug)")
    difficulty = str(meta["difficulty"])
    if difficulty not in DIFFICULTIES:
        raise ContentError(
            rel, line_of("difficulty"), f"difficulty must be one of {', '.join(DIFFICULTIES)}"
        )
    title = str(meta["title"]).strip()
    tags = meta.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str | int | float) for t in tags):
        raise ContentError(rel, line_of("tags"), "tags must be a list of words")
    prompts = meta.get("quiz_prompts") or []
    if not isinstance(prompts, list) or not all(
        isinstance(p, str) and p.strip().endswith("?") for p in prompts
    ):
        raise ContentError(
            rel, line_of("quiz_prompts"), "quiz_prompts must be a list of questions ending in '?'"
        )
    measures = meta.get("measures") or []
    if not isinstance(measures, list) or not all(
        isinstance(m, str) and SLUG_RE.match(m) for m in measures
    ):
        raise ContentError(rel, line_of("measures"), "measures must be a list of item slugs")
    if deck == "deep-learning" and len(prompts) != 2:
        raise ContentError(rel, line_of("quiz_prompts"), "deep-learning items have 2 quiz prompts")

    body = "\n".join(lines[end + 1 :]).strip("\n")
    if not body.strip():
        raise ContentError(rel, end + 1, "the body (explanation) is empty")
    item = ParsedItem(
        path=rel,
        deck=deck,
        number=number,
        slug=slug,
        title=title,
        topic=topic,
        difficulty=difficulty,
        tags=[str(t) for t in tags],
        section=str(meta["section"]) if meta.get("section") else None,
        source=str(meta["source"]) if meta.get("source") else None,
        quiz_prompts=[p.strip() for p in prompts],
        body=body,
        measures=list(measures),
    )
    item.samples = _samples(lines, end + 1, rel)
    return item


def parse_fence_info(info: str) -> tuple[str, dict[str, str]]:
    """'python requires=cuda,network' → ('python', {'requires': 'cuda,network'})."""
    words = info.split()
    if not words:
        return "", {}
    attrs: dict[str, str] = {}
    for word in words[1:]:
        key, sep, value = word.partition("=")
        attrs[key] = value if sep else ""
    return words[0].lower(), attrs


def make_markdown(renderer_cls: type[RendererHTML] = RendererHTML) -> MarkdownIt:
    """The one Markdown dialect of content: CommonMark, tables, strikethrough, no raw HTML."""
    md = MarkdownIt(
        "commonmark",
        {"html": False, "linkify": False, "typographer": False},
        renderer_cls=renderer_cls,
    )
    md.enable("table")
    md.enable("strikethrough")
    return md


_PARSER = make_markdown()


def _samples(lines: list[str], start: int, rel: str) -> list[SampleSpec]:
    """The python fences of the body, wherever they sit (lists, quotes), checked; found by
    the same parser that renders them, so what is shown and what is stored agree."""
    body_lines = lines[start:]
    samples: list[SampleSpec] = []
    for token in _PARSER.parse("\n".join(body_lines)):
        if token.type != "fence" or token.map is None:
            continue
        first, last = token.map
        line = start + first + 1
        closing = body_lines[last - 1].strip() if last - 1 > first else ""
        if not (closing.startswith(token.markup) and closing.strip(token.markup[0]) == ""):
            raise ContentError(rel, line, "code fence is never closed")
        language, attrs = parse_fence_info(token.info)
        if language != "python":
            if attrs:
                raise ContentError(rel, line, "only python fences take attributes")
            continue
        code = token.content[:-1] if token.content.endswith("\n") else token.content
        samples.append(_sample(len(samples) + 1, code, attrs, rel, line))
    return samples


def _sample(index: int, code: str, attrs: dict[str, str], rel: str, line: int) -> SampleSpec:
    unknown = sorted(set(attrs) - {"requires", "variant-of"})
    if unknown:
        raise ContentError(rel, line, f"unknown code fence attribute '{unknown[0]}'")
    requires = tuple(r for r in attrs.get("requires", "").split(",") if r)
    bad = [r for r in requires if r not in REQUIREMENTS]
    if bad:
        raise ContentError(
            rel, line, f"unknown requires value '{bad[0]}' (known: {', '.join(REQUIREMENTS)})"
        )
    variant_of: int | None = None
    if "variant-of" in attrs:
        raw = attrs["variant-of"]
        if not raw.isdigit() or not 1 <= int(raw) < index:
            raise ContentError(
                rel, line, f"variant-of={raw} must name an earlier sample (1..{index - 1})"
            )
        variant_of = int(raw)
    if not code.strip():
        raise ContentError(rel, line, "code sample is empty")
    return SampleSpec(index=index, code=code, requires=requires, variant_of=variant_of, line=line)


def _load_yaml(text: str, rel: str, first_line: int) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = first_line + mark.line if mark is not None else first_line
        problem = getattr(exc, "problem", None) or str(exc)
        raise ContentError(rel, line, f"invalid YAML: {problem}") from None
