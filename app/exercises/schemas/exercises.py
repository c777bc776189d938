"""Code exercises in the JSON API: the list, one exercise (never its reference, hidden
tests or mutants), a submission and its graded result, and the solution on request."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from app.exercises.catalogue import ExerciseRow, visible_tests
from app.exercises.hints import Hint, HintState
from app.exercises.solutions import Solution
from app.models import Exercise, Run
from app.runs.schemas import RunAccepted
from sandbox.protocol import MAX_CODE_BYTES

ExerciseStatus = Literal["new", "attempted", "solved", "solved-with-hints", "solved-after-reveal"]


class ExerciseSummary(BaseModel):
    slug: str
    title: str
    topic: str
    difficulty: Literal["easy", "medium", "hard"]
    items: list[str] = Field(description="Slugs of the Q&A items the exercise drills.")
    entry_point: str = Field(description="The function or class the learner writes.")
    status: ExerciseStatus = Field(
        description="The asker's standing: new; attempted (a submission, a hint or a reveal); "
        "solved once a Submit passed every test, solved-with-hints when a hint was shown "
        "before that, solved-after-reveal when the solution was."
    )

    @classmethod
    def of(cls, row: ExerciseRow) -> ExerciseSummary:
        return cls.model_validate(row, from_attributes=True)


class VisibleTest(BaseModel):
    name: str
    category: str = Field(description="shape, values, gradients, properties, edge cases, ...")
    description: str


class ExercisePublic(BaseModel):
    """What a learner works from. The reference, the hidden tests and the mutants are never
    part of it."""

    slug: str
    title: str
    statement_markdown: str
    starter_code: str
    entry_point: str
    visible_tests: list[VisibleTest] = Field(description="What Run mode runs.")
    backends: list[Literal["cpu", "cuda"]]

    @classmethod
    def of(cls, exercise: Exercise) -> ExercisePublic:
        return cls(
            slug=exercise.slug,
            title=exercise.title,
            statement_markdown=exercise.statement_markdown,
            starter_code=exercise.starter_code,
            entry_point=exercise.entry_point,
            visible_tests=[VisibleTest(**t) for t in visible_tests(exercise)],
            backends=exercise.backend_list,
        )


class SubmissionCreate(BaseModel):
    code: str = Field(description=f"Python source, at most {MAX_CODE_BYTES // 1024} KiB of UTF-8.")
    backend: Literal["cpu", "cuda", "auto", "both"] = Field(
        "auto",
        description="both: graded on the CPU and on the GPU at once, for results side by side "
        "(the answer's `paired` is the GPU's submission, or `absent` says why there is none).",
    )
    mode: Literal["run", "submit"] = Field(
        "submit", description="run: the visible tests only; submit: every test, hidden ones too."
    )


class FailingCasePublic(BaseModel):
    """The case a visible test failed on. Values are summaries: a tensor of at most 64
    values in full (`text`), a larger one by its `shape`, `dtype`, top-left `corner`, `min`,
    `max` and its count of `nan` and `inf`; lists, tuples and dicts by their `items`. Floats
    that JSON cannot hold (NaN, infinities) are strings."""

    seed: int = Field(description="The case's own seed: its inputs are drawn from it.")
    inputs: list[dict[str, Any]] = Field(
        default_factory=list, description="Each argument's summary, under its `name`."
    )
    compared: str | None = Field(None, description="What the failing comparison was of.")
    output: dict[str, Any] | None = Field(None, description="Your output's summary.")
    expected: dict[str, Any] | None = Field(None, description="The expected output's summary.")
    difference: dict[str, Any] | None = Field(
        None,
        description="The largest absolute difference (`abs`), `where` it is, and the "
        "`expected` and `got` values there.",
    )
    snippet: str = Field(
        "",
        description="Python that rebuilds the inputs and calls your code as the test did, "
        "then prints your output against the expected one: paste your solution above it.",
    )


class TestResultPublic(BaseModel):
    __test__ = False  # not a pytest test class

    name: str
    category: str
    hidden: bool
    status: Literal["pass", "fail", "error", "timeout"]
    message: str = Field(
        description="Why it did not pass; a hidden test never shows expected values."
    )
    case: FailingCasePublic | None = Field(
        None,
        description="A failing visible test's case; never on a hidden test, nor on a pass.",
    )


class SubmissionAccepted(RunAccepted):
    """A submission queued; with backend `both`, its GPU twin too."""

    paired: RunAccepted | None = Field(
        None, description="With backend both: the same code's submission on the GPU."
    )
    absent: dict[str, str] = Field(
        default_factory=dict,
        description="With backend both: each device it is not graded on, and why.",
    )


class PerformancePublic(BaseModel):
    ratio: float = Field(description="Your code's median time over the reference's.")
    learner_ms: float
    reference_ms: float


class SubmissionPublic(BaseModel):
    """A submission as stored; `verdict` and `score` are null until it has been graded."""

    id: str
    status: str = Field(description="queued, running or done")
    mode: Literal["run", "submit"]
    verdict: str | None = Field(
        description="passed, failed, error or timeout; or how the run ended when it was "
        "never graded (rejected, internal_error, killed...)."
    )
    score: float | None = Field(description="0-100, each test weighted by its category.")
    tests: list[TestResultPublic]
    detail: str
    output: str = Field(description="What the learner's code printed (capped).")
    backend: str | None
    device: str | None
    wall_ms: int | None
    performance: PerformancePublic | None = Field(
        None, description="Time against the reference, when the exercise measured it."
    )
    tolerances: dict[str, str] = Field(
        default_factory=dict,
        description="Per dtype, the tolerance the comparisons allowed on this device.",
    )

    @classmethod
    def of(cls, run: Run) -> SubmissionPublic:
        report = json.loads(run.grading) if run.grading else {}
        verdict = run.grading_verdict
        if run.status == "done" and (verdict is None or run.verdict == "killed"):
            # Never graded, or stopped part-way (cancelled): how the run itself ended, not
            # the verdict of the tests it had reached.
            verdict = run.verdict
        return cls(
            id=run.id,
            status=run.status,
            mode=run.grading_mode or "submit",
            verdict=verdict,
            score=run.score,
            tests=[TestResultPublic(**_public(t)) for t in report.get("tests", [])],
            detail=report.get("detail") or run.detail,
            output=run.stdout + run.stderr,
            backend=run.backend,
            device=run.device,
            wall_ms=run.wall_ms,
            performance=_performance(report.get("performance")),
            tolerances=report.get("tolerances") or {},
        )


def _performance(figures: object) -> PerformancePublic | None:
    """The timing figures of the report, when they are whole."""
    if not isinstance(figures, dict):
        return None
    try:
        return PerformancePublic(
            ratio=float(figures["ratio"]),
            learner_ms=float(figures["learner"]["median_ms"]),
            reference_ms=float(figures["reference"]["median_ms"]),
        )
    except (KeyError, TypeError, ValueError):
        return None


def _public(test: dict[str, object]) -> dict[str, object]:
    public = {k: test[k] for k in ("name", "category", "hidden", "status", "message")}
    case = test.get("case")
    if isinstance(case, dict) and not test["hidden"]:  # a hidden test's inputs stay secret
        public["case"] = case
    return public


class DiffRowPublic(BaseModel):
    kind: Literal["equal", "changed", "removed", "added"] = Field(
        description="removed: a line of yours alone; added: a line of the reference alone."
    )
    yours_number: int | None
    yours: str | None
    reference_number: int | None
    reference: str | None


class DiffPublic(BaseModel):
    changed_lines: int
    rows: list[DiffRowPublic] = Field(description="Line-aligned, in order.")


class SolutionPublic(BaseModel):
    code: str = Field(description="The reference solution.")
    editorial_markdown: str = Field(description="Why it is written so, its cost, the usual bugs.")
    editorial_html: str = Field(description="The editorial rendered, as the statement is.")
    revealed_at: str
    diff: DiffPublic | None = Field(
        description="Your last submitted code beside the reference; null if you submitted none."
    )

    @classmethod
    def of(cls, solution: Solution) -> SolutionPublic:
        diff = solution.diff
        return cls(
            code=solution.code,
            editorial_markdown=solution.editorial_markdown,
            editorial_html=solution.editorial_html,
            revealed_at=solution.revealed_at.isoformat(),
            diff=None
            if diff is None
            else DiffPublic(
                changed_lines=diff.changed_lines,
                rows=[
                    DiffRowPublic(
                        kind=r.kind,
                        yours_number=r.left_number,
                        yours=r.left,
                        reference_number=r.right_number,
                        reference=r.right,
                    )
                    for r in diff.rows
                ],
            ),
        )


class SolutionRequest(BaseModel):
    give_up: bool = Field(
        False, description="Give up: see the solution without a failed submission."
    )


class HintPublic(BaseModel):
    number: int = Field(description="Its place in the order the asker was shown hints, from 1.")
    index: int = Field(description="Its position in the exercise's hints.")
    level: Literal["concept", "approach", "step"]
    category: str = Field(description="The test category it answers (values, gradients, ...).")
    text: str


class NextHintPublic(BaseModel):
    """What the next request would show, without its text."""

    number: int
    level: Literal["concept", "approach", "step"]
    category: str
    answers_failing_test: bool = Field(
        description="It answers a category that failed in the asker's latest submission."
    )


class HintsPublic(BaseModel):
    total: int
    shown: list[HintPublic] = Field(description="The hints shown so far, in the order shown.")
    next: NextHintPublic | None = Field(description="null when every hint has been shown.")
    failing_categories: list[str] = Field(
        description="The failing categories of the asker's latest submission (none if it passed)."
    )

    @classmethod
    def of(cls, state: HintState) -> HintsPublic:
        upcoming = state.next
        return cls(
            total=state.total,
            shown=[_hint(n, h) for n, h in enumerate(state.shown, start=1)],
            next=None
            if upcoming is None
            else NextHintPublic(
                number=len(state.shown) + 1,
                level=upcoming.level,
                category=upcoming.category,
                answers_failing_test=state.next_answers_failure,
            ),
            failing_categories=state.failing,
        )


def _hint(number: int, hint: Hint) -> HintPublic:
    return HintPublic(
        number=number,
        index=hint.index,
        level=hint.level,
        category=hint.category,
        text=hint.text,
    )


class HintRequest(BaseModel):
    category: str | None = Field(
        None, max_length=32, description="Ask for the next hint of this test category."
    )


class HintShown(HintsPublic):
    hint: HintPublic = Field(description="The hint just shown.")
