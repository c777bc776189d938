"""Formulas in prose become MathML; words, code and the plain text stay as they were. Items
and exercise statements alike write their formulas in prose."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from app.importer.maths import typeset
from app.importer.render import render_markdown
from app.settings import PROJECT_ROOT


@pytest.mark.parametrize(
    ("text", "holds"),
    [
        ("μ_B", "<msub><mi>μ</mi><mrow><mi>B</mi></mrow></msub>"),
        ("σ²_B", "<msubsup><mi>σ</mi><mrow><mi>B</mi></mrow><mrow><mn>2</mn></mrow></msubsup>"),
        ("√(σ² + ε)", "<msqrt><mrow><msup><mi>σ</mi><mrow><mn>2</mn></mrow></msup><mo>+</mo>"),
        ("∂L/∂W", "<mfrac><mrow><mo>∂</mo><mi>L</mi></mrow><mrow><mo>∂</mo><mi>W</mi></mrow>"),
        ("hₙ₋₁", "<msub><mi>h</mi><mrow><mi>n</mi><mo>−</mo><mn>1</mn></mrow></msub>"),
        ("1/√fan_in", '<msqrt><mrow><mi mathvariant="normal">fan_in</mi></mrow></msqrt>'),
        ("√v̂", '<msqrt><mrow><mover accent="true"><mi>v</mi><mo>^</mo></mover></mrow></msqrt>'),
        ("β₁ᵗ", "<msubsup><mi>β</mi><mrow><mn>1</mn></mrow><mrow><mi>t</mi></mrow></msubsup>"),
    ],
)
def test_formula_pieces_become_mathml(text: str, holds: str) -> None:
    assert holds in typeset(text)


@pytest.mark.parametrize("text", ["x_train", "a plain sentence", "d_model", "e.g. this", "GPU"])
def test_words_that_only_look_like_maths_stay_text(text: str) -> None:
    assert typeset(text) == text


def test_text_is_escaped_and_code_is_left_alone() -> None:
    assert typeset("<b> & μ_B").startswith("&lt;b&gt; &amp; <math")
    rendered = render_markdown("Use `μ_B` in code, μ_B in prose.")
    assert rendered.html.count("<math") == 1 and "<code>μ_B</code>" in rendered.html
    assert rendered.text == "Use μ_B in code, μ_B in prose.", "search reads the text as written"


def test_an_item_page_shows_typeset_formulas(client: TestClient) -> None:
    page = client.get("/items/batch-normalization").text
    assert '<math display="inline">' in page and "<msqrt>" in page


def test_an_exercise_statement_typesets_its_formulas_as_items_do(client: TestClient) -> None:
    page = client.get("/exercises/adamw-bias-correction").text
    statement = page.split('<section class="statement prose"', 1)[1].split("</section>", 1)[0]
    beta_t = "<msubsup><mi>β</mi><mrow><mn>1</mn></mrow><mrow><mi>t</mi></mrow></msubsup>"
    assert beta_t in statement  # β₁ᵗ, not `β1^t` in code
    assert '<msqrt><mrow><mover accent="true"><mi>v</mi><mo>^</mo></mover>' in statement
    assert "<code>p ← " not in statement and "p ← p · (1 − lr · weight_decay)" in statement


def test_statements_write_their_formulas_in_prose_not_in_code() -> None:
    """Inline code in a statement is code (names, shapes, calls): a formula written there
    would be shown in a monospaced box instead of typeset."""
    formula = re.compile(r"[←√²ᵀ⌊βεθσμ≤≥π]")
    found = {}
    for path in sorted((PROJECT_ROOT / "content" / "exercises").glob("*/statement.md")):
        prose = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
        spans = [s for s in re.findall(r"`([^`\n]+)`", prose) if formula.search(s)]
        if spans:
            found[path.parent.name] = spans
    assert found == {}
