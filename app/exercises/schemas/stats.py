"""The authors' figures per exercise, as the admin API answers them
(app/exercises/stats.py says how each is counted)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class FailingTestPublic(BaseModel):
    """A test and the share of graded submits that did not pass it."""

    model_config = ConfigDict(from_attributes=True)
    name: str
    category: str
    hidden: bool
    failing: int
    graded: int
    share: float


class HintUsePublic(BaseModel):
    """How many people were shown one hint of the exercise."""

    model_config = ConfigDict(from_attributes=True)
    hint_index: int
    level: str
    people: int


class FlakyCasePublic(BaseModel):
    """A failing submit and the next one, the same program, passing the hidden tests named."""

    model_config = ConfigDict(from_attributes=True)
    failed_run: str
    passed_run: str
    tests: list[str]


class ExerciseStatsPublic(BaseModel):
    """One exercise's figures. People are learners, or cookie-less clients by their key."""

    model_config = ConfigDict(from_attributes=True)
    slug: str
    title: str
    tried: int = Field(description="People with a submission of either mode.")
    submitted: int = Field(description="People with a graded submit.")
    solved: int = Field(description="People with a passing submit.")
    solve_rate: float | None = Field(description="solved / submitted; null before any submit.")
    median_submits_to_solve: float | None = Field(
        description="Graded submits up to and including each solver's first pass."
    )
    median_seconds_to_solve: float | None = Field(
        description="From each solver's first submission (either mode) to the first pass."
    )
    failing_tests: list[FailingTestPublic] = Field(description="The tests failed most, first.")
    hints: list[HintUsePublic]
    hint_people: int = Field(description="People shown any hint of the exercise.")
    reveals: int = Field(description="People who revealed the solution.")
    flagged: bool = Field(description="A hidden test failed and then passed the same program.")
    flaky_tests: list[str]
    flaky_cases: list[FlakyCasePublic]
