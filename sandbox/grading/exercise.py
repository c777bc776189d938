"""An exercise folder, content/exercises/<slug>/ (content/README.md, "Exercises"): reading
it, checking it, and the parts the grader needs.

    exercise.yml    slug, title, topic, difficulty, items, entry_point, and optionally
                    tolerances, forbid (+ forbid_reason), performance, call_seconds,
                    backends
    statement.md    the problem, with an example      starter.py     what the learner edits
    reference.py    our solution                      tests.py       DECLARATIONS (dsl.py)
    hints.yml       levelled hints                    editorial.md   why, complexity, bugs
    mutants/<classic_bug>.patch                       at least three, one classic bug each:
                                                      a diff against reference.py (patches.py)"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from sandbox.grading.config import Config, ExerciseError

__all__ = ["Config", "Exercise", "ExerciseError", "declarations", "grading_request", "load"]
from sandbox.grading.dsl import CATEGORIES, Test
from sandbox.grading.patches import PatchError, apply_patch
from sandbox.grading.solution import load_source
from sandbox.protocol.grading import GradingRequest, Mode

REQUIRED_FILES = (
    "exercise.yml",
    "statement.md",
    "starter.py",
    "reference.py",
    "tests.py",
    "hints.yml",
    "editorial.md",
)
HINT_LEVELS = ("concept", "approach", "step")
MIN_MUTANTS = 3
MUTANT_NAME = re.compile(r"^[a-z][a-z0-9_]{2,60}$")


def declarations(tests_source: str) -> list[Test]:
    """DECLARATIONS of a tests.py, executed here (our own code)."""
    namespace = load_source(tests_source, "tests.py")
    found = namespace.get("DECLARATIONS")
    if not isinstance(found, list) or not found or not all(isinstance(t, Test) for t in found):
        raise ExerciseError("tests.py: DECLARATIONS must be a non-empty list of tests")
    names = [t.name for t in found]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise ExerciseError(f"tests.py: test names repeat: {duplicated}")
    return list(found)


@dataclass(frozen=True)
class Exercise:
    """One folder, read."""

    config: Config
    folder: Path
    files: dict[str, str]  # every required file's text, by name
    mutants: dict[str, str]  # classic bug name -> source
    hints: list[dict[str, str]]

    @property
    def reference(self) -> str:
        return self.files["reference.py"]

    @property
    def starter(self) -> str:
        return self.files["starter.py"]

    @property
    def tests_source(self) -> str:
        return self.files["tests.py"]

    def tests(self) -> list[Test]:
        return declarations(self.tests_source)

    def visible_tests(self) -> list[dict[str, str]]:
        """What a learner may see of the tests before running them."""
        return [
            {"name": t.name, "category": t.category, "description": t.description}
            for t in self.tests()
            if t.visible
        ]


def load(folder: Path) -> Exercise:
    """Read and check one exercise folder; ExerciseError says what is wrong."""
    files: dict[str, str] = {}
    for name in REQUIRED_FILES:
        path = folder / name
        if not path.is_file():
            raise ExerciseError(f"{folder.name}/{name}: missing")
        files[name] = path.read_text(encoding="utf-8")
    try:
        raw = yaml.safe_load(files["exercise.yml"])
        hints_raw = yaml.safe_load(files["hints.yml"])
    except yaml.YAMLError as exc:
        raise ExerciseError(f"{folder.name}: YAML does not parse: {exc}") from None
    config = Config.from_json(raw, f"{folder.name}/exercise.yml")
    if config.slug != folder.name:
        raise ExerciseError(f"{folder.name}/exercise.yml: slug must equal the folder's name")
    mutants = _mutants(folder, files["reference.py"])
    exercise = Exercise(config, folder, files, mutants, _hints(hints_raw, folder.name))
    problems = check(exercise)
    if problems:
        raise ExerciseError(f"{folder.name}: " + "; ".join(problems))
    return exercise


def _mutants(folder: Path, reference: str) -> dict[str, str]:
    """Each authored mutant's source: its patch applied to the reference."""
    stray = sorted(p.name for p in folder.glob("mutants/*.py"))
    if stray:
        raise ExerciseError(
            f"{folder.name}/mutants: write {stray[0]} as a .patch against reference.py"
        )
    mutants = {}
    for path in sorted(folder.glob("mutants/*.patch")):
        try:
            mutants[path.stem] = apply_patch(reference, path.read_text(encoding="utf-8"))
        except PatchError as exc:
            raise ExerciseError(f"{folder.name}/mutants/{path.name}: {exc}") from None
    return mutants


def load_all(root: Path) -> list[Exercise]:
    return [load(p) for p in sorted(root.iterdir()) if p.is_dir() and not p.name.startswith(".")]


def _hints(data: Any, name: str) -> list[dict[str, str]]:
    hints = data.get("hints") if isinstance(data, dict) else None
    if not isinstance(hints, list) or not hints:
        raise ExerciseError(f"{name}/hints.yml: needs a list `hints`")
    out = []
    for hint in hints:
        if not isinstance(hint, dict) or set(hint) != {"level", "category", "text"}:
            raise ExerciseError(f"{name}/hints.yml: each hint has level, category and text")
        if hint["level"] not in HINT_LEVELS or hint["category"] not in CATEGORIES:
            raise ExerciseError(
                f"{name}/hints.yml: level is one of {HINT_LEVELS}, category one of {CATEGORIES}"
            )
        out.append({k: str(v) for k, v in hint.items()})
    return out


def check(exercise: Exercise) -> list[str]:
    """Every rule of the format that reading alone can check (the honesty of the tests is
    checked by running them: tests/grading/test_honesty.py)."""
    problems = []
    tests = exercise.tests()
    if not any(t.visible for t in tests):
        problems.append("tests.py: at least one test must be visible (Run mode shows them)")
    if len(exercise.mutants) < MIN_MUTANTS:
        problems.append(f"mutants/: at least {MIN_MUTANTS} mutants, one classic bug each")
    problems += [f"mutants/{n}.patch: name it for its bug" for n in exercise.mutants
                 if not MUTANT_NAME.match(n)]  # fmt: skip
    if not re.search(r"^#+ .*Example", exercise.files["statement.md"], re.MULTILINE):
        problems.append("statement.md: needs a heading with 'Example'")
    # A target that names a method of an object built by the test's setup (a performance
    # test's `setup=`) is not a top-level name.
    names = {t.target.split(".")[0] for t in tests
             if isinstance(t.target, str) and t.options.get("setup") is None}  # fmt: skip
    names.add(exercise.config.entry_point)
    for file in ("starter.py", "reference.py"):
        defined = top_level_names(exercise.files[file])
        missing = sorted(names - defined)
        if missing:
            problems.append(f"{file}: does not define {missing}")
    return problems


def top_level_names(source: str) -> set[str]:
    tree = ast.parse(source)
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def grading_request(exercise: Exercise, mode: Mode, seed: int | None = None) -> GradingRequest:
    """The grading payload of a run of `exercise` (sandbox/protocol/grading.py)."""
    return GradingRequest(
        slug=exercise.config.slug,
        mode=mode,
        config=exercise.config.to_json(),
        reference=exercise.reference,
        tests=exercise.tests_source,
        seed=seed,
    )
