"""Two versions of a piece of code side by side, line-aligned: difflib's opcodes turned into
rows, each holding a line of either side (or none) and what happened to it."""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import zip_longest

KINDS = ("equal", "changed", "removed", "added")  # removed: only in the left; added: the right


@dataclass(frozen=True)
class DiffRow:
    kind: str
    left_number: int | None  # 1-based; None where the left has no line on this row
    left: str | None
    right_number: int | None
    right: str | None


@dataclass(frozen=True)
class SideBySide:
    rows: list[DiffRow]

    @property
    def changed_lines(self) -> int:
        """Rows that differ: a changed pair counts once."""
        return sum(1 for r in self.rows if r.kind != "equal")

    @property
    def identical(self) -> bool:
        return self.changed_lines == 0


def side_by_side(left: str, right: str) -> SideBySide:
    """`left` beside `right`. Trailing whitespace is ignored in matching (an editor adds or
    strips it), but each side keeps its own text; a replaced block pairs its lines in order,
    the longer side's extra lines facing nothing."""
    a, b = left.splitlines(), right.splitlines()
    matcher = SequenceMatcher(None, [s.rstrip() for s in a], [s.rstrip() for s in b], False)
    rows: list[DiffRow] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            rows += [
                DiffRow("equal", i + 1, a[i], j + 1, b[j])
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
            ]
            continue
        for i, j in zip_longest(range(i1, i2), range(j1, j2)):
            kind = "added" if i is None else "removed" if j is None else "changed"
            rows.append(
                DiffRow(
                    kind,
                    None if i is None else i + 1,
                    None if i is None else a[i],
                    None if j is None else j + 1,
                    None if j is None else b[j],
                )
            )
    return SideBySide(rows)
