"""Long names in titles and prompts get line-break opportunities at their joints
(app/web/templating.py: breakable), and nothing else about the text changes."""

from __future__ import annotations

from markupsafe import Markup

from app.web.templating import breakable


def test_a_dotted_or_snake_case_name_may_break_after_each_joint() -> None:
    assert breakable("torch.nn.parallel.DistributedDataParallel") == (
        "torch.<wbr>nn.<wbr>parallel.<wbr>DistributedDataParallel"
    )
    assert breakable("zero_grad(set_to_none=True)") == "zero_<wbr>grad(set_<wbr>to_<wbr>none=True)"


def test_short_names_numbers_sentence_ends_and_markup_are_left_alone() -> None:
    assert breakable("torch.nn.DataParallel, e.g. lr 1.5e-3. Then 2_000 steps.") == (
        "torch.nn.DataParallel, e.g. lr 1.5e-3. Then 2_000 steps."
    )
    assert breakable(Markup("<a href='x.y'>a.b</a>")) == "<a href='x.y'>a.b</a>"


def test_the_text_is_escaped_first() -> None:
    out = breakable("<script>alert(torch.nn.functional.softmax)</script> & a_b")
    assert out == (
        "&lt;script&gt;alert(torch.<wbr>nn.<wbr>functional.<wbr>softmax)&lt;/script&gt; &amp; a_b"
    )
    assert isinstance(out, Markup)
