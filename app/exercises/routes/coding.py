"""Coding rounds in the browser: start a coding interview (from the Quizzes or the
Exercises page), solve its exercise against the clock, and read the verdict. A mock
interview's round is started from the mock (app/interview/routes/mock.py) and solved here too."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.deps import (
    ClientDep,
    EngineDep,
    IdentityDep,
    NowDep,
    ReaderDep,
    RunLimiterDep,
    RunQueueDep,
    SettingsDep,
    WriterDep,
    identify_for_page,
)
from app.domain import MAX_DRAFT_CHARACTERS, Identity
from app.exercises import catalogue as exercises
from app.exercises import coding_rounds, round_drafts
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
    limiter: RunLimiterDep,
    settings: SettingsDep,
    client: ClientDep,
    now: NowDep,
) -> HTMLResponse:
    """The exercise against the clock (no hints, no solution, no difficulty), or, once the
    round is over, its verdict: code left unsubmitted at the end is graded first."""
    sandbox = await queue.status()  # before any query: the page waits on nothing else
    await _grade_leftover(engine, queue, limiter, settings, identity, round_id, client, now)
    context = await asyncio.to_thread(_page_context, engine, identity, round_id, now)
    return render(request, "coding/round.html", {**context, "sandbox": sandbox})


@router.get("/coding/{round_id}/verdict")
async def round_verdict(
    request: Request,
    round_id: str,
    identity: IdentityDep,
    engine: EngineDep,
    queue: RunQueueDep,
    limiter: RunLimiterDep,
    settings: SettingsDep,
    client: ClientDep,
    now: NowDep,
) -> HTMLResponse:
    """A closed round's verdict alone: what its page asks for again while the last code is
    being graded."""
    await _grade_leftover(engine, queue, limiter, settings, identity, round_id, client, now)
    context = await asyncio.to_thread(_page_context, engine, identity, round_id, now)
    return render(request, "coding/_verdict.html", context)


async def _grade_leftover(
    engine: Engine,
    queue: RunQueueDep,
    limiter: RunLimiterDep,
    settings: SettingsDep,
    identity: Identity,
    round_id: str,
    client: str,
    now: datetime,
) -> None:
    await round_drafts.grade_leftover(
        engine,
        queue,
        limiter,
        identity,
        round_id,
        content_dir=settings.content_dir,
        client=client,
        token_secret=settings.resolved_secret_key(),
        now=now,
    )


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


@router.post("/coding/{round_id}/draft", status_code=204)
def keep_draft(
    round_id: str,
    scope: ReaderDep,
    now: NowDep,
    code: Annotated[str, Form(max_length=MAX_DRAFT_CHARACTERS * 2)] = "",
) -> Response:
    """Keep the code in the round's editor (its page sends it as the learner types)."""
    round_drafts.keep(scope, round_id, code=code, now=now)
    scope.session.commit()
    return Response(status_code=204)


@router.post("/coding/{round_id}/finish")
def finish(
    round_id: str,
    scope: ReaderDep,
    now: NowDep,
    code: Annotated[str | None, Form(max_length=MAX_DRAFT_CHARACTERS * 2)] = None,
) -> Response:
    """End the round now (the page also sends this when its clock runs out), with the code
    in its editor: code not submitted is graded as the round's last submission."""
    # Long over (a page asleep past the end): the code saved as the learner typed stands.
    with contextlib.suppress(coding_rounds.RoundClosed):
        if code is not None:
            round_drafts.keep(scope, round_id, code=code, now=now)
    view = coding_rounds.finish(scope, round_id, now=now)
    scope.session.commit()
    return RedirectResponse(f"/coding/{view.round.id}", status_code=303)
