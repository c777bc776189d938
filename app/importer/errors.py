"""The one error a bad content file raises: where it is and what is wrong."""

from __future__ import annotations


class ContentError(Exception):
    """A content file breaks the format; the import stops and writes nothing."""

    def __init__(self, path: str, line: int, reason: str) -> None:
        super().__init__(f"{path}:{line}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason
