"""A generated section of a README: the text between two HTML comment markers, rewritten by
a report's `--write-readme` and compared with the report by a test."""

from __future__ import annotations

import re

from app.importer.errors import ContentError


def with_section(readme: str, body: str, *, start: str, end: str, where: str) -> str:
    """`readme` with the text between `start` and `end` replaced by `body`."""
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    if not pattern.search(readme):
        raise ContentError(where, 1, f"no {start} … {end} section to rewrite")
    return pattern.sub(lambda _: f"{start}\n{body}\n{end}", readme, count=1)
