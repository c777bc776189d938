"""Authored mutants as patches: `mutants/<bug_name>.patch`, a unified diff against the
exercise's reference.py, a few lines long and named for its bug. A reader sees the bug at a
glance, and a change to the reference that touches a mutant's lines makes its patch fail to
apply (the exercise no longer loads) instead of leaving a stale full copy behind.

Applied strictly: every context and removed line must match the reference at the hunk's
stated position (no fuzz, no offset), so a patch means exactly one program."""

from __future__ import annotations

import difflib
import re

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
CONTEXT_LINES = 2


class PatchError(ValueError):
    """A patch that does not parse, or does not apply to the reference as it is."""


def make_patch(reference: str, mutant: str, name: str) -> str:
    """The unified diff that turns `reference` into `mutant` (both complete sources)."""
    diff = difflib.unified_diff(
        reference.splitlines(keepends=True),
        mutant.splitlines(keepends=True),
        "reference.py",
        f"mutants/{name}.py",
        n=CONTEXT_LINES,
    )
    out = []
    for line in diff:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def apply_patch(reference: str, patch: str) -> str:
    """`reference` with `patch` applied; PatchError names the hunk that does not match."""
    source = reference.splitlines(keepends=True)
    lines = patch.splitlines(keepends=True)
    out: list[str] = []
    at = 0  # lines of `source` consumed
    i = 0
    hunks = 0
    while i < len(lines) and not lines[i].startswith("@@"):
        i += 1  # the header: --- and +++ (and any text before them)
    while i < len(lines):
        match = HUNK.match(lines[i])
        if not match:
            raise PatchError(f"line {i + 1} of the patch: expected a hunk header")
        hunks += 1
        start = int(match.group(1)) - (0 if match.group(2) == "0" else 1)
        if start < at:
            raise PatchError(f"hunk {hunks} overlaps the one before it")
        out.extend(source[at:start])
        at = start
        i += 1
        while i < len(lines) and not lines[i].startswith("@@"):
            line = lines[i]
            kind, text = line[:1], line[1:]
            if i + 1 < len(lines) and lines[i + 1].startswith("\\"):
                text = text.removesuffix("\n")  # "\ No newline at end of file"
            if kind in (" ", "-"):
                if at >= len(source) or source[at] != text:
                    raise PatchError(
                        f"hunk {hunks} does not match reference.py at line {at + 1}: "
                        f"expected {text.rstrip()!r}"
                    )
                if kind == " ":
                    out.append(text)
                at += 1
            elif kind == "+":
                out.append(text)
            elif kind != "\\":
                raise PatchError(f"line {i + 1} of the patch: not a diff line")
            i += 1
    if hunks == 0:
        raise PatchError("the patch changes nothing")
    out.extend(source[at:])
    return "".join(out)


def changed_lines(patch: str) -> int:
    """How many lines the patch removes or adds (its size, for the format's limit)."""
    body = [ln for ln in patch.splitlines() if not ln.startswith(("---", "+++"))]
    return sum(1 for ln in body if ln[:1] in "+-")


def main(argv: list[str] | None = None) -> int:
    """`python -m sandbox.grading.patches make <exercise folder> <buggy copy.py> [name]`:
    writes mutants/<name>.patch (name: the copy's file name) and prints it."""
    import argparse
    from pathlib import Path

    parser = argparse.ArgumentParser(prog="python -m sandbox.grading.patches")
    parser.add_argument("command", choices=["make"])
    parser.add_argument("folder", type=Path)
    parser.add_argument("copy", type=Path)
    parser.add_argument("name", nargs="?")
    args = parser.parse_args(argv)
    name = args.name or args.copy.stem
    reference = (args.folder / "reference.py").read_text(encoding="utf-8")
    patch = make_patch(reference, args.copy.read_text(encoding="utf-8"), name)
    if not patch:
        print("the copy is the reference: no bug to record")
        return 1
    target = args.folder / "mutants" / f"{name}.patch"
    target.parent.mkdir(exist_ok=True)
    target.write_text(patch, encoding="utf-8")
    print(patch, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
