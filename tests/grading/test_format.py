"""Every exercise folder follows the format of content/README.md ("Exercises"): it loads, its
topic is a deck topic, and the Q&A items it drills exist."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from app.settings import PROJECT_ROOT
from sandbox.grading.exercise import ExerciseError, load
from tests.grading.conftest import exercise_folders

CONTENT = PROJECT_ROOT / "content"


def item_slugs() -> set[str]:
    slugs = set()
    for path in CONTENT.glob("*/*.md"):
        match = re.search(r"^slug:\s*(\S+)", path.read_text(encoding="utf-8"), re.MULTILINE)
        if match:
            slugs.add(match.group(1))
    return slugs


def topics() -> set[str]:
    decks = yaml.safe_load((CONTENT / "decks.yml").read_text(encoding="utf-8"))
    return {t["slug"] for t in decks["topics"]}


@pytest.mark.parametrize("folder", exercise_folders(), ids=lambda p: p.name)
def test_every_authored_mutant_is_a_small_patch_that_applies_cleanly(folder: Path) -> None:
    from sandbox.grading.patches import apply_patch, changed_lines

    reference = (folder / "reference.py").read_text(encoding="utf-8")
    patches = sorted((folder / "mutants").glob("*.patch"))
    assert len(patches) >= 3
    assert not list((folder / "mutants").glob("*.py")), "mutants are patches, not copies"
    for patch in patches:
        text = patch.read_text(encoding="utf-8")
        mutant = apply_patch(reference, text)
        assert mutant != reference, patch.name
        compile(mutant, patch.name, "exec")
        assert changed_lines(text) <= 30, f"{patch.name}: one bug, a few lines"


def test_a_patch_that_no_longer_matches_its_reference_is_refused(tmp_path: Path) -> None:
    source = next(p for p in exercise_folders() if p.name == "stable-softmax")
    copy = tmp_path / source.name
    shutil.copytree(source, copy)
    reference = copy / "reference.py"
    reference.write_text(
        reference.read_text().replace("shifted = x - x.amax", "shifted = x - x.max")
    )
    with pytest.raises(ExerciseError, match=r"mutants/.*\.patch: hunk 1 does not match"):
        load(copy)


def test_patches_round_trip_and_refuse_fuzz() -> None:
    from sandbox.grading.patches import PatchError, apply_patch, make_patch

    before = "a\nb\nc\nd\ne\n"
    after = "a\nB\nc\nd\ne\nf"
    patch = make_patch(before, after, "x")
    assert apply_patch(before, patch) == after
    with pytest.raises(PatchError):
        apply_patch("a\nb\nX\nd\ne\n", patch)
    with pytest.raises(PatchError, match="changes nothing"):
        apply_patch(before, "--- a\n+++ b\n")


@pytest.mark.parametrize("folder", exercise_folders(), ids=lambda p: p.name)
def test_exercise_folder_follows_the_format(folder: Path) -> None:
    exercise = load(folder)
    assert exercise.config.topic in topics()
    unknown = set(exercise.config.items) - item_slugs()
    assert not unknown, f"items that do not exist: {sorted(unknown)}"


def test_a_broken_folder_is_refused_with_its_reason(tmp_path: Path) -> None:
    source = exercise_folders()[0]
    broken = tmp_path / source.name
    broken.mkdir()
    for path in source.rglob("*"):
        if path.is_file():
            target = broken / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    (broken / "mutants" / sorted(p.name for p in (broken / "mutants").iterdir())[0]).unlink()
    for extra in list((broken / "mutants").iterdir())[1:]:
        extra.unlink()
    with pytest.raises(ExerciseError, match="at least 3 mutants"):
        load(broken)
    (broken / "tests.py").write_text("DECLARATIONS = []\n")
    with pytest.raises(ExerciseError, match="DECLARATIONS"):
        load(broken)


@pytest.mark.parametrize("folder", exercise_folders(), ids=lambda p: p.name)
def test_every_exercise_reports_its_time_against_the_reference(folder: Path) -> None:
    """A performance test in every exercise, so that every passing submission says how its
    time compares with the reference's (graded or not)."""
    kinds = [t.kind for t in load(folder).tests()]
    assert kinds.count("performance") == 1
