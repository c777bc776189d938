"""The choice of the next hint: level order, the failing categories first, and the hints
read from an exercise folder."""

from __future__ import annotations

from pathlib import Path

from app.exercises.hints import Hint, choose, load
from app.settings import PROJECT_ROOT

HINTS = [
    Hint(0, "step", "values", "s"),
    Hint(1, "concept", "gradients", "c"),
    Hint(2, "approach", "values", "a"),
    Hint(3, "concept", "values", "c2"),
]


def test_hints_come_in_level_order_then_file_order() -> None:
    order = []
    shown: set[int] = set()
    while (hint := choose(HINTS, shown, [])) is not None:
        order.append(hint.index)
        shown.add(hint.index)
    assert order == [1, 3, 2, 0]


def test_a_failing_category_goes_first_at_its_lowest_level() -> None:
    assert choose(HINTS, set(), ["values"]) == HINTS[3]
    assert choose(HINTS, {3}, ["values"]) == HINTS[2]
    assert choose(HINTS, {3, 2, 0}, ["values"]) == HINTS[1]  # none left for it: in order
    assert choose(HINTS, {0, 1, 2, 3}, ["values"]) is None
    assert choose(HINTS, set(), ["shape"]) == HINTS[1]


def test_hints_are_read_from_the_folder() -> None:
    hints = load(PROJECT_ROOT / "content", "stable-softmax")
    assert [(h.level, h.category) for h in hints] == [
        ("concept", "edge cases"),
        ("approach", "values"),
        ("approach", "edge cases"),
        ("step", "values"),
    ]
    assert hints[0].text.startswith("exp(1000)") and not hints[0].text.endswith("\n")


def test_every_hint_is_plain_text() -> None:
    """The page shows a hint as text, never as Markdown: a backtick would be shown as is."""
    content = PROJECT_ROOT / "content"
    marked = [
        (folder.name, hint.index)
        for folder in sorted((content / "exercises").iterdir())
        if (folder / "exercise.yml").is_file()
        for hint in load(content, folder.name)
        if "`" in hint.text
    ]
    assert marked == []


def test_an_edited_hints_file_is_read_again(content_copy: Path) -> None:
    """Parsed hints are kept per version of the file: an edit shows at the next page."""
    path = content_copy / "exercises" / "stable-softmax" / "hints.yml"
    first = load(content_copy, "stable-softmax")
    assert load(content_copy, "stable-softmax") == first
    path.write_text(
        "hints:\n  - level: concept\n    category: values\n    text: Only one hint now.\n",
        encoding="utf-8",
    )
    only = Hint(0, "concept", "values", "Only one hint now.")
    assert load(content_copy, "stable-softmax") == [only]
    path.unlink()
    assert load(content_copy, "stable-softmax") == []
