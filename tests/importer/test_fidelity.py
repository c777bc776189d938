"""The decks say what the source texts say: titles, quiz prompts, prose, tables and code.

The source texts are kept in tests/data/seeds/. These tests read them directly
rather than trusting any conversion step."""

from __future__ import annotations

import re

import pytest

from app.importer.parse import parse_catalogue, parse_item
from app.importer.render import render_markdown
from tests.support.paths import CONTENT_DIR, SEEDS_DIR

DL_SEED = SEEDS_DIR / "003_1889d03d78f6f9e5.txt"
ESSENTIALS_SEED = SEEDS_DIR / "001_855883de487cd871.txt"


def load_deck(deck: str) -> dict[int, object]:
    catalogue = parse_catalogue(CONTENT_DIR / "decks.yml", "decks.yml")
    items = {}
    for path in sorted((CONTENT_DIR / deck).glob("*.md")):
        item = parse_item(path.read_text(encoding="utf-8"), f"{deck}/{path.name}", catalogue)
        items[item.number] = item
    return items


def seed_dl_items() -> dict[int, list[str]]:
    """Item number → its lines in the source (title line first), up to the next item."""
    lines = DL_SEED.read_text(encoding="utf-8").splitlines()
    index = lines[4]
    titles = re.split(r"\s(?=\d{1,2}\. )", index)
    titles = [re.sub(r"^\d+\. ", "", t).strip() for t in titles]
    assert len(titles) == 38
    starts = [
        next(i for i in range(6, len(lines)) if lines[i].strip() == f"{n}. {t}")
        for n, t in enumerate(titles, start=1)
    ]
    end_marker = next(
        i for i in range(starts[-1], len(lines)) if lines[i].strip() in ("«", "Tools")
    )
    bounds = [*starts[1:], end_marker]
    return {
        n: [line for line in lines[s:e] if line.strip()]
        for n, (s, e) in enumerate(zip(starts, bounds, strict=True), start=1)
    }


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def table_rows(markdown: str) -> list[str]:
    """Each Markdown table row with its cells joined together, separator rows left out."""
    rows = []
    for line in markdown.splitlines():
        if line.startswith("|") and not re.fullmatch(r"[|\s:-]+", line):
            cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
            rows.append("".join(c.strip().replace("\\|", "|") for c in cells))
    return rows


SEED_DL = seed_dl_items() if DL_SEED.exists() else {}
DL = load_deck("deep-learning") if DL_SEED.exists() else {}


def test_deep_learning_deck_has_38_items_numbered_in_seed_order() -> None:
    assert sorted(DL) == list(range(1, 39))


@pytest.mark.parametrize("number", range(1, 39))
def test_title_and_quiz_prompts_are_word_for_word(number: int) -> None:
    seed, item = SEED_DL[number], DL[number]
    assert seed[0].strip() == f"{number}. {item.title}"  # type: ignore[attr-defined]
    assert [p.strip() for p in seed[-2:]] == item.quiz_prompts  # type: ignore[attr-defined]


@pytest.mark.parametrize("number", range(1, 39))
def test_every_source_line_is_kept_as_code_prose_or_table(number: int) -> None:
    """Each line of the source item is a line of a code sample, a table row with its columns
    rebuilt, or part of the rendered prose; and code never strays into prose."""
    item = DL[number]
    body: str = item.body  # type: ignore[attr-defined]
    code_lines = {
        line.rstrip()
        for s in item.samples  # type: ignore[attr-defined]
        if s.variant_of is None
        for line in s.code.splitlines()
    }
    rows = set(table_rows(body))
    prose = squash(render_markdown(body).text)
    missing = []
    for line in SEED_DL[number][1:-2]:
        if line.rstrip() in code_lines or line.strip() in rows:
            continue
        looks_like_code = line.startswith((" ", "import ", "from ", "def ", "class ", "print("))
        if looks_like_code or squash(line) not in prose:
            missing.append(line)
    assert missing == []


@pytest.mark.parametrize("number", range(1, 39))
def test_samples_hold_only_source_code(number: int) -> None:
    seed_lines = {line.rstrip() for line in SEED_DL[number]}
    for sample in DL[number].samples:  # type: ignore[attr-defined]
        if sample.variant_of is not None:
            continue
        extra = [
            ln for ln in sample.code.splitlines() if ln.strip() and ln.rstrip() not in seed_lines
        ]
        assert extra == [], f"sample {sample.index} has lines the source does not"


def test_76_quiz_prompts_in_all() -> None:
    assert sum(len(i.quiz_prompts) for i in DL.values()) == 76  # type: ignore[attr-defined]


def test_no_page_debris_in_any_deck() -> None:
    debris = (
        "Prev Next",
        "Comments & Discussions",
        "Invest now",
        "Could not find what you",
        "Posted on",
        "referral",
        "TABLE-TODO",
    )
    for path in CONTENT_DIR.glob("*/*.md"):
        text = path.read_text(encoding="utf-8")
        assert not [d for d in debris if d in text], path.name


# PyTorch essentials: the extraction glued inline code to its neighbours and flattened the
# lists, so compare with all whitespace removed.


def seed_essentials() -> list[tuple[str, list[str]]]:
    """(question, answer lines) for the 20 questions, in source order."""
    text = ESSENTIALS_SEED.read_text(encoding="utf-8")
    blocks = re.split(r"\n-\n", text)[1:]
    out = []
    for block in blocks:
        question, _, answer = block.partition("- Answer:")
        out.append((question, ["Answer:" + answer.splitlines()[0], *answer.splitlines()[1:]]))
    return out


SECTION_HEADINGS = {
    "Intermediate Concepts",
    "Advanced Concepts",
    "Scenario-Based Questions",
}


def nospace(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_pytorch_essentials_has_20_questions_word_for_word() -> None:
    items = load_deck("pytorch-essentials")
    seed = seed_essentials()
    assert sorted(items) == list(range(1, 21))
    assert len(seed) == 20
    for number, (question, _) in enumerate(seed, start=1):
        assert nospace(items[number].title) == nospace(question), number  # type: ignore[attr-defined]


def test_pytorch_essentials_answers_keep_every_source_line() -> None:
    items = load_deck("pytorch-essentials")
    for number, (_, answer) in enumerate(seed_essentials(), start=1):
        item = items[number]
        rendered = nospace(render_markdown(item.body).text)  # type: ignore[attr-defined]
        code = nospace(" ".join(s.code for s in item.samples))  # type: ignore[attr-defined]
        # A flattened list leaves " - " between what were separate bullets.
        fragments = [f for line in answer for f in re.split(r"(?:^|(?<=[\s:.?)]))-\s", line)]
        for fragment in fragments:
            words = nospace(fragment.replace("Answer:", ""))
            if fragment.strip() in SECTION_HEADINGS:
                continue  # kept as the items' `section`
            if words and words not in rendered and words not in code:
                pytest.fail(f"item {number} lost: {fragment.strip()!r}")


def test_source_files_exist_for_every_item() -> None:
    for path in CONTENT_DIR.glob("*/*.md"):
        match = re.search(r"^source: (.+)$", path.read_text(encoding="utf-8"), re.M)
        if match:
            assert (SEEDS_DIR / match.group(1).strip()).exists(), path


# torch.compile labs: the code is the articles' code. Extraction lost the indentation of
# one article, so lines are compared with their leading whitespace removed.


def test_torch_compile_samples_hold_only_source_code() -> None:
    source = {
        line.strip()
        for name in (
            "002_fef8682b9dedee44.txt",
            "004_fa14bdde797b3f24.txt",
            "000_f6f92c3bdd46ad2b.txt",
        )
        for line in (SEEDS_DIR / name).read_text(encoding="utf-8").splitlines()
    }
    for number, item in load_deck("torch-compile").items():
        for sample in item.samples:  # type: ignore[attr-defined]
            if sample.variant_of is not None:
                continue
            extra = [
                ln for ln in sample.code.splitlines() if ln.strip() and ln.strip() not in source
            ]
            assert extra == [], f"item {number} sample {sample.index}: {extra}"
