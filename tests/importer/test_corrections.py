"""The corrections list (app/importer/corrections.py): every correction an item carries says
how it was checked, and content/README.md lists them all as the items have them."""

from __future__ import annotations

from app.importer.corrections import (
    README_END,
    README_START,
    corrections_in,
    first_sentence,
    list_markdown,
    load_corrections,
)
from tests.support.paths import CONTENT_DIR

ITEM = """Some text.

> **Correction:** The sample prints `tensor([30.])`, not 40. The rest explains why.
> More of the first paragraph.
>
> *Checked:* the runnable variant below, in CI.

- a list item
  > **Correction:** Indented, e.g. inside a list item! Second sentence.

> A quote that is not a correction.
"""


def test_a_correction_is_found_with_what_was_wrong_and_how_it_was_checked() -> None:
    found = corrections_in(ITEM, deck="d", number=3, slug="s")
    assert [(c.line, c.wrong, c.checked) for c in found] == [
        (3, "The sample prints `tensor([30.])`, not 40.", "the runnable variant below, in CI."),
        (9, "Indented, e.g. inside a list item!", None),
    ]


def test_a_sentence_ends_outside_code_spans_and_abbreviations() -> None:
    assert first_sentence("Call `m.eval()` first. Then run.") == "Call `m.eval()` first."
    assert first_sentence("Norms, i.e. LayerNorm, differ. Yes.") == "Norms, i.e. LayerNorm, differ."
    assert first_sentence("No full stop at all") == "No full stop at all"


def test_every_correction_says_how_it_was_checked() -> None:
    unsaid = [
        f"{c.deck}/{c.number:02d}-{c.slug}.md:{c.line}"
        for c in load_corrections(CONTENT_DIR)
        if not c.checked
    ]
    assert unsaid == [], "end each correction with a '> *Checked:* ...' paragraph"


def test_the_readme_lists_every_correction() -> None:
    readme = (CONTENT_DIR / "README.md").read_text(encoding="utf-8")
    shown = readme.split(README_START, 1)[1].split(README_END, 1)[0].strip()
    assert shown == list_markdown(load_corrections(CONTENT_DIR)), (
        "run `backprop corrections --write-readme`"
    )
