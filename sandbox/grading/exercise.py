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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from sandbox.grading.compare import Tolerance
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
KEYS = {"slug", "title", "topic", "difficulty", "items", "entry_point"}
OPTIONAL_KEYS = {
    "tolerances",
    "forbid",
    "forbid_reason",
    "side_effects",
    "may_alias",
    "performance",
    "call_seconds",
    "backends",
}
DIFFICULTIES = ("easy", "medium", "hard")
HINT_LEVELS = ("concept", "approach", "step")
MIN_MUTANTS = 3
SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,79}$")
MUTANT_NAME = re.compile(r"^[a-z][a-z0-9_]{2,60}$")


class ExerciseError(ValueError):
    """An exercise folder that breaks the format; the message names the file and the rule."""


@dataclass(frozen=True)
class Config:
    """exercise.yml, checked. Travels to the grader as JSON (`to_json`)."""

    slug: str
    title: str
    topic: str
    difficulty: str
    items: list[str]
    entry_point: str
    tolerances: dict[str, dict[str, Tolerance]] = field(default_factory=dict)
    forbid: list[str] = field(default_factory=list)
    forbid_reason: str = ""
    # Targets whose contract is to change what they are given (a `fill_` initialiser, an
    # in-place clip), each with the reason: the default side-effect checks spare them.
    side_effects: dict[str, str] = field(default_factory=dict)
    # Targets whose answer may share memory with an argument (a gradient passed through).
    may_alias: dict[str, str] = field(default_factory=dict)
    performance: dict[str, Any] = field(default_factory=dict)
    call_seconds: float = 10.0
    backends: list[str] = field(default_factory=lambda: ["cpu", "cuda"])

    @classmethod
    def from_json(cls, data: Any, where: str = "exercise.yml") -> Config:
        if not isinstance(data, dict):
            raise ExerciseError(f"{where}: must be a mapping")
        missing, unknown = KEYS - set(data), set(data) - KEYS - OPTIONAL_KEYS
        if missing or unknown:
            raise ExerciseError(f"{where}: missing {sorted(missing)}, unknown {sorted(unknown)}")
        if not isinstance(data["slug"], str) or not SLUG.match(data["slug"]):
            raise ExerciseError(f"{where}: slug must be lowercase letters, digits, hyphens")
        if data["difficulty"] not in DIFFICULTIES:
            raise ExerciseError(f"{where}: difficulty must be one of {DIFFICULTIES}")
        for key in ("title", "topic", "entry_point"):
            if not isinstance(data[key], str) or not data[key].strip():
                raise ExerciseError(f"{where}: {key} must be text")
        items, forbid = data["items"], data.get("forbid", [])
        if not isinstance(items, list) or not items or not all(isinstance(i, str) for i in items):
            raise ExerciseError(f"{where}: items must list the Q&A item slugs it drills")
        if not isinstance(forbid, list) or not all(isinstance(f, str) for f in forbid):
            raise ExerciseError(f"{where}: forbid must be a list of names")
        reason = data.get("forbid_reason", "")
        if not isinstance(reason, str) or bool(forbid) != bool(reason.strip()):
            raise ExerciseError(
                f"{where}: forbid_reason says in a sentence why the forbid list is forbidden "
                "(given exactly when forbid is)"
            )
        side_effects = _reasons(data.get("side_effects"), where, "side_effects")
        may_alias = _reasons(data.get("may_alias"), where, "may_alias")
        performance = data.get("performance") or {}
        if not isinstance(performance, dict) or set(performance) - {"graded", "max_ratio"}:
            raise ExerciseError(f"{where}: performance takes graded and max_ratio")
        backends = data.get("backends", ["cpu", "cuda"])
        if not isinstance(backends, list) or not set(backends) <= {"cpu", "cuda"} or not backends:
            raise ExerciseError(f"{where}: backends is a list of cpu and cuda")
        return cls(
            slug=data["slug"],
            title=data["title"],
            topic=data["topic"],
            difficulty=data["difficulty"],
            items=items,
            entry_point=data["entry_point"],
            tolerances=_tolerances(data.get("tolerances") or {}, where),
            forbid=forbid,
            forbid_reason=reason.strip(),
            side_effects=side_effects,
            may_alias=may_alias,
            performance=performance,
            call_seconds=float(data.get("call_seconds", 10.0)),
            backends=backends,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "title": self.title,
            "topic": self.topic,
            "difficulty": self.difficulty,
            "items": self.items,
            "entry_point": self.entry_point,
            "tolerances": {
                dtype: {dev: {"atol": t.atol, "rtol": t.rtol} for dev, t in per.items()}
                for dtype, per in self.tolerances.items()
            },
            "forbid": self.forbid,
            "forbid_reason": self.forbid_reason,
            "side_effects": self.side_effects,
            "may_alias": self.may_alias,
            "performance": self.performance,
            "call_seconds": self.call_seconds,
            "backends": self.backends,
        }


def _reasons(data: Any, where: str, key: str) -> dict[str, str]:
    """{target: the reason the default check spares it}."""
    data = data or {}
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in data.items()
    ):
        raise ExerciseError(f"{where}: {key} maps a target to the reason it is spared")
    return {k: v.strip() for k, v in data.items()}


def _tolerances(data: Any, where: str) -> dict[str, dict[str, Tolerance]]:
    """{dtype: {device: {atol, rtol}}}."""
    out: dict[str, dict[str, Tolerance]] = {}
    if not isinstance(data, dict):
        raise ExerciseError(f"{where}: tolerances must be a mapping")
    for dtype, per_device in data.items():
        if dtype not in ("float16", "bfloat16", "float32", "float64"):
            raise ExerciseError(f"{where}: tolerances for unknown dtype {dtype!r}")
        if not isinstance(per_device, dict) or not set(per_device) <= {"cpu", "cuda"}:
            raise ExerciseError(f"{where}: tolerances.{dtype} maps cpu / cuda to atol, rtol")
        out[dtype] = {}
        for device, tol in per_device.items():
            if not isinstance(tol, dict) or set(tol) != {"atol", "rtol"}:
                raise ExerciseError(f"{where}: tolerances.{dtype}.{device} needs atol and rtol")
            out[dtype][device] = Tolerance(float(tol["atol"]), float(tol["rtol"]))
    return out


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
    checked by running them: tests/exercises/test_honesty.py)."""
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
