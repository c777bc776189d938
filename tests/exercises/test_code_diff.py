"""Side-by-side diffs: line-aligned rows, a replaced block paired in order, trailing
whitespace ignored in matching."""

from __future__ import annotations

from app.exercises.code_diff import DiffRow, side_by_side


def test_identical_code_has_only_equal_rows() -> None:
    diff = side_by_side("a\nb\n", "a\nb")
    assert diff.identical and [r.kind for r in diff.rows] == ["equal", "equal"]


def test_a_replaced_block_pairs_its_lines_and_the_longer_side_faces_nothing() -> None:
    diff = side_by_side("keep\nold 1\nold 2\nold 3\nend", "keep\nnew 1\nnew 2\nend\nextra")
    assert diff.rows == [
        DiffRow("equal", 1, "keep", 1, "keep"),
        DiffRow("changed", 2, "old 1", 2, "new 1"),
        DiffRow("changed", 3, "old 2", 3, "new 2"),
        DiffRow("removed", 4, "old 3", None, None),
        DiffRow("equal", 5, "end", 4, "end"),
        DiffRow("added", None, None, 5, "extra"),
    ]
    assert diff.changed_lines == 4


def test_trailing_whitespace_does_not_count_as_a_change() -> None:
    diff = side_by_side("x = 1   \ny = 2", "x = 1\ny = 3")
    assert [r.kind for r in diff.rows] == ["equal", "changed"]
    assert diff.rows[0].left == "x = 1   "  # each side keeps its own text
