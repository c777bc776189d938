"""Mock interviews in the browser: one open-answer prompt after another against a timer,
then the coding round (solved on its own page, app/exercises/routes/coding.py), then grading every
answer, and the follow-up about the code, against its key points."""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import RedirectResponse, Response

from app.deps import NowDep, ReaderDep, identify_for_page
from app.interview import mock
from app.study.quizzes import MAX_MOCK_PROMPTS

router = APIRouter(include_in_schema=False, dependencies=[Depends(identify_for_page)])
COVERED_FIELD = re.compile(r"^covered-(\d{1,2})$")
FOLLOWUP_FIELD = "followup"  # the key points of the coding round's follow-up, ticked


@router.post("/quizzes/{quiz_id}/mock/next")
def next_prompt(
    quiz_id: str,
    scope: ReaderDep,
    now: NowDep,
    position: Annotated[int, Form(ge=1, le=MAX_MOCK_PROMPTS)],
) -> Response:
    """The current prompt is answered: on to the next (or to grading)."""
    mock.move_on(scope, quiz_id, position=position, now=now)
    scope.session.commit()
    return RedirectResponse(f"/quizzes/{quiz_id}", status_code=303)


@router.post("/quizzes/{quiz_id}/mock/coding")
def start_coding_round(quiz_id: str, scope: ReaderDep, now: NowDep) -> Response:
    """Every prompt is answered: the coding round's clock starts now."""
    view = mock.start_coding_round(scope, quiz_id, now=now)
    scope.session.commit()
    return RedirectResponse(f"/coding/{view.round.id}", status_code=303)


async def _covered(request: Request) -> dict[int, list[int]]:
    """The key points ticked per prompt: form fields covered-N, as many as were ticked."""
    form = await request.form()
    covered: dict[int, list[int]] = {}
    for name, value in form.multi_items():
        found = COVERED_FIELD.match(name)
        if found and isinstance(value, str) and value.isdigit() and len(value) <= 2:
            covered.setdefault(int(found.group(1)), []).append(int(value))
    return covered


async def _followup(request: Request) -> list[int]:
    """The key points ticked for the coding round's follow-up (fields `followup`)."""
    form = await request.form()
    values = form.getlist(FOLLOWUP_FIELD)
    return [int(v) for v in values if isinstance(v, str) and v.isdigit() and len(v) <= 2]


@router.post("/quizzes/{quiz_id}/mock/grade")
def grade(
    quiz_id: str,
    scope: ReaderDep,
    now: NowDep,
    covered: Annotated[dict[int, list[int]], Depends(_covered)],
    followup: Annotated[list[int], Depends(_followup)],
) -> Response:
    """Grade every answer by the key points ticked (fields covered-N, one per prompt), and
    the coding round's follow-up (fields `followup`)."""
    mock.grade(scope, quiz_id, covered=covered, followup=followup, now=now)
    scope.session.commit()
    return RedirectResponse(f"/quizzes/{quiz_id}", status_code=303)
