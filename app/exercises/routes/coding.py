"""Coding rounds in the browser: start a coding interview (from the Quizzes or the
Exercises page), solve its exercise against the clock, and read the verdict. A mock
interview's round is started from the mock (app/interview/routes/mock.py) and solved here too."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.deps import (
    EngineDep,
    IdentityDep,
    NowDep,
    ReaderDep,
    RunQueueDep,
    WriterDep,
    identify_for_page,
)
from app.domain import Identity
from app.exercises import catalogue as exercises
from app.exercises import coding_rounds
from app.exercises.coding_rounds import MAX_MINUTES, MIN_MINUTES, ROUND_MINUTES, RoundNotFound
from app.library import content_cache
from app.platform import learners
from app.web.templating import render

router = APIRouter(include_in_schema=False, dependencies=[Depends(identify_for_page)])


@router.post("/coding")
def start_coding_interview(
    scope: WriterDep,
    now: NowDep,
    topic: Annotated[str, Form(max_length=64)] = "",
    minutes: Annotated[int, Form(ge=MIN_MINUTES, le=MAX_MINUTES)] = ROUND_MINUTES,
) -> Response:
    """One exercise at random (from `topic`, if chosen), its clock running from now."""
    exercise = coding_rounds.choose(scope, topics=(topic,) if topic else (), now=now)
    found = coding_rounds.create(scope, exercise, minutes=minutes, start=True, now=now)
    scope.session.commit()
    return RedirectResponse(f"/coding/{found.id}", status_code=303)


@router.get("/coding/{round_id}")
async def round_page(
    request: Request,
    round_id: str,
    identity: IdentityDep,
    engine: EngineDep,
    queue: RunQueueDep,
    now: NowDep,
) -> HTMLResponse:
    """The exercise against the clock (no hints, no solution, no difficulty), or, once the
    round is over, its verdict."""
    sandbox = await queue.status()  # before any query: the page waits on nothing else
    context = await asyncio.to_thread(_page_context, engine, identity, round_id, now)
    return render(request, "coding/round.html", {**context, "sandbox": sandbox})


def _page_context(
    engine: Engine, identity: Identity, round_id: str, now: datetime
) -> dict[str, object]:
    # Not expired at the commit: the page is drawn from these rows after the session ends.
    with Session(engine, expire_on_commit=False) as session:
        scope = learners.resolve(session, identity)
        if scope is None:
            raise RoundNotFound(round_id)
        view = coding_rounds.load(scope, round_id, now=now)
        session.commit()  # closed at its deadline just now, perhaps
        catalogue = content_cache.snapshot(session.connection()).catalogue
        return {
            "view": view,
            "exercise": view.exercise,
            "visible_tests": exercises.visible_tests(view.exercise),
            "catalogue": catalogue,
        }


@router.post("/coding/{round_id}/finish")
def finish(round_id: str, scope: ReaderDep, now: NowDep) -> Response:
    """End the round now (the page also sends this when its clock runs out)."""
    view = coding_rounds.finish(scope, round_id, now=now)
    scope.session.commit()
    return RedirectResponse(f"/coding/{view.round.id}", status_code=303)
