"""Formulas in prose become MathML; words, code and the plain text stay as they were."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.importer.maths import typeset
from app.importer.render import render_markdown


@pytest.mark.parametrize(
    ("text", "holds"),
    [
        ("μ_B", "<msub><mi>μ</mi><mrow><mi>B</mi></mrow></msub>"),
        ("σ²_B", "<msubsup><mi>σ</mi><mrow><mi>B</mi></mrow><mrow><mn>2</mn></mrow></msubsup>"),
        ("√(σ² + ε)", "<msqrt><mrow><msup><mi>σ</mi><mrow><mn>2</mn></mrow></msup><mo>+</mo>"),
        ("∂L/∂W", "<mfrac><mrow><mo>∂</mo><mi>L</mi></mrow><mrow><mo>∂</mo><mi>W</mi></mrow>"),
        ("hₙ₋₁", "<msub><mi>h</mi><mrow><mi>n</mi><mo>−</mo><mn>1</mn></mrow></msub>"),
        ("1/√fan_in", '<msqrt><mrow><mi mathvariant="normal">fan_in</mi></mrow></msqrt>'),
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
