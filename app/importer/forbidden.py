"""The statement's "Not allowed in this exercise" section, generated from exercise.yml's
`forbid` and `forbid_reason` at import, so that what the statement forbids and what the
grader refuses (sandbox/grading/api_rules.py) come from one list and cannot disagree."""

from __future__ import annotations

from collections.abc import Sequence

from app.importer.errors import ContentError

# The grader's shorthands (sandbox/grading/api_rules.py, ALIASES; a test holds them equal).
ALIASES = {"F": "torch.nn.functional", "nn": "torch.nn"}
HEADING = "### Not allowed in this exercise"


def described(entry: str) -> str:
    """One forbidden entry as the statement lists it."""
    if entry.startswith("."):
        return f"`{entry}`: as a method or attribute of anything, e.g. `x{entry}(...)`"
    first, _, rest = entry.partition(".")
    if first in ALIASES:
        return f"`{entry}` ({ALIASES[first]}{'.' + rest if rest else ''})"
    return f"`{entry}`"


def forbidden_section(forbid: object, reason: object, where: str) -> str:
    """Markdown to append to the statement; empty when nothing is forbidden."""
    if forbid in (None, []):
        if reason:
            raise ContentError(where, 1, "forbid_reason without a forbid list")
        return ""
    if not isinstance(forbid, list) or not all(isinstance(f, str) and f for f in forbid):
        raise ContentError(where, 1, "forbid must be a list of names")
    if not isinstance(reason, str) or not reason.strip():
        raise ContentError(where, 1, "forbid_reason must say why the forbid list is forbidden")
    return _section(forbid, reason)


def _section(forbid: Sequence[str], reason: str) -> str:
    lines = [HEADING, "", reason.strip(), ""]
    lines += [f"- {described(e)}" for e in forbid]
    lines += [
        "",
        "A name under a listed one counts too (`torch.optim.SGD` where `torch.optim` is",
        "listed), however it is imported or aliased. Only what your code calls counts: a",
        "name in a string, a comment, a docstring or `__all__` does not, and neither does a",
        'self-test under `if __name__ == "__main__":`, which the grader never runs. A',
        "refusal names the line and the call.",
    ]
    return "\n".join(lines) + "\n"
