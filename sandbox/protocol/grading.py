"""A graded run: what it asks for (the exercise's trusted sources, the mode, the seed) and
what it answers (one result per test, a verdict and a score). The worker, the grader in its
jail and the app share these; sandbox/README.md ("Grading") tells the whole protocol."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

# A request's exercise sources (reference, tests, configuration) together: generous for our
# own files, small enough to travel in one message beside the learner's 64 KiB of code.
MAX_EXERCISE_BYTES = 256 * 1024
SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,79}$")
MAX_MESSAGE_CHARS = 2000


class Mode(StrEnum):
    RUN = "run"  # visible tests only
    SUBMIT = "submit"  # every test


class TestStatus(StrEnum):
    __test__ = False  # not a pytest test class
    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"  # the learner's code raised, or its process ended, in this test
    TIMEOUT = "timeout"  # a call of this test ran past its time


class GradingVerdict(StrEnum):
    PASSED = "passed"  # every test passed
    FAILED = "failed"  # at least one did not
    ERROR = "error"  # the code could not be graded at all (did not load, or the grader failed)
    TIMEOUT = "timeout"  # the whole grading ran out of time


@dataclass(frozen=True)
class GradingRequest:
    """What a run with a grading payload carries beside the learner's code. `exercise` holds
    the trusted sources, sent by the app from content/exercises/<slug>/: `config` (the
    parsed exercise.yml), `reference` and `tests` (Python source). They reach the grader's
    jail only (sandbox/README.md), never the learner's."""

    slug: str
    mode: Mode
    config: dict[str, Any]
    reference: str
    tests: str
    seed: int | None = None  # None: the worker draws one

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "mode": self.mode.value}

    @classmethod
    def from_json(cls, data: object) -> GradingRequest:
        """ValueError (with a sentence) for anything malformed."""
        if not isinstance(data, dict):
            raise ValueError("grading must be an object")
        slug, mode = data.get("slug"), data.get("mode")
        if not isinstance(slug, str) or not SLUG_RE.match(slug):
            raise ValueError("grading.slug must be an exercise slug")
        if mode not in {m.value for m in Mode}:
            raise ValueError("grading.mode must be 'run' or 'submit'")
        config, reference, tests = data.get("config"), data.get("reference"), data.get("tests")
        if not isinstance(config, dict):
            raise ValueError("grading.config must be an object")
        if not isinstance(reference, str) or not isinstance(tests, str):
            raise ValueError("grading.reference and grading.tests must be source text")
        if len(reference.encode()) + len(tests.encode()) > MAX_EXERCISE_BYTES:
            raise ValueError("the exercise's sources are over 256 KiB")
        seed = data.get("seed")
        if seed is not None and (type(seed) is not int or not 0 <= seed < 2**63):
            raise ValueError("grading.seed must be a non-negative integer")
        return cls(slug, Mode(mode), config, reference, tests, seed)


@dataclass(frozen=True)
class TestResult:
    """One test's outcome. `message` explains any status but pass; for a hidden test it
    says what failed and by how much, never the expected values."""

    __test__ = False  # not a pytest test class

    name: str
    category: str
    hidden: bool
    status: TestStatus
    message: str = ""
    ms: int = 0
    # A failing visible test's case (sandbox/grading/cases.py): its inputs, the learner's
    # output, the expected output, the largest difference, the seed and a snippet that
    # replays it. Never on a hidden test.
    case: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        data = {**asdict(self), "status": self.status.value}
        if self.case is None:
            del data["case"]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TestResult:
        """ValueError for anything that is not one (it comes from a jailed process)."""
        try:
            return cls(
                name=str(data["name"])[:120],
                category=str(data["category"])[:20],
                hidden=bool(data["hidden"]),
                status=TestStatus(data["status"]),
                message=str(data.get("message", ""))[:MAX_MESSAGE_CHARS],
                ms=int(data.get("ms", 0)),
                case=_case(data.get("case"), bool(data["hidden"])),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"malformed test result: {exc}") from None


@dataclass(frozen=True)
class GradingReport:
    """The whole grading: `tests` in the order they ran, the verdict, the score (0-100,
    each test weighted by its category), `detail` in plain words for anything but passed,
    `performance` (the timing figures of a passing submission, when measured), and
    `tolerances`: per dtype, the tolerance the comparisons allowed on the device it ran on."""

    verdict: GradingVerdict
    score: float
    tests: list[TestResult] = field(default_factory=list)
    detail: str = ""
    seed: int = 0
    mode: Mode = Mode.SUBMIT
    performance: dict[str, Any] | None = None
    tolerances: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict.value,
            "score": self.score,
            "tests": [t.to_json() for t in self.tests],
            "detail": self.detail,
            "seed": self.seed,
            "mode": self.mode.value,
            "performance": self.performance,
            "tolerances": self.tolerances,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GradingReport:
        try:
            return cls(
                verdict=GradingVerdict(data["verdict"]),
                score=float(data["score"]),
                tests=[TestResult.from_json(t) for t in data.get("tests", [])],
                detail=str(data.get("detail", "")),
                seed=int(data.get("seed", 0)),
                mode=Mode(data.get("mode", "submit")),
                performance=data.get("performance"),
                tolerances=_tolerances(data.get("tolerances") or {}),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"malformed grading report: {exc}") from None


MAX_CASE_BYTES = 96 * 1024


def _case(data: Any, hidden: bool) -> dict[str, Any] | None:
    """A result's case, bounded (it comes from a jailed process); a hidden test's is dropped
    whatever the grader sent, since its inputs are the secret."""
    if data is None or hidden:
        return None
    if not isinstance(data, dict):
        raise TypeError("a case must be an object")
    if len(json.dumps(data, allow_nan=False)) > MAX_CASE_BYTES:
        return None  # the grader bounds its cases: one over the size is left out, not trusted
    return data


def _tolerances(data: Any) -> dict[str, str]:
    """A report's tolerances, bounded (it comes from a jailed process)."""
    if not isinstance(data, dict) or len(data) > 8:
        raise TypeError("tolerances must be a small mapping")
    return {str(k)[:20]: str(v)[:80] for k, v in data.items()}
