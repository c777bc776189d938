"""Coding rounds in the JSON API: start a coding interview, read it (its difficulty and
result only once it is over), submit to it before its deadline, finish it early."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Depends

from app.deps import (
    ClientDep,
    EngineDep,
    IdempotencyKey,
    IdentityDep,
    NowDep,
    ReaderDep,
    RunLimiterDep,
    RunQueueDep,
    SettingsDep,
    WriterDep,
    identify,
)
from app.exercises import coding_rounds, round_drafts
from app.exercises.schemas.coding import CodingRoundCreate, CodingRoundPublic
from app.exercises.schemas.exercises import SubmissionCreate
from app.runs.schemas import RunAccepted
from app.web.schemas import errors

router = APIRouter(
    prefix="/api/coding-rounds", tags=["coding rounds"], dependencies=[Depends(identify)]
)


@router.post("", status_code=201, responses=errors(400, 401, 403, 422))
def start_round(body: CodingRoundCreate, scope: WriterDep, now: NowDep) -> CodingRoundPublic:
    """A coding interview: one exercise drawn at random (from `topic`, if given; not one
    solved in the last two weeks while others remain), its clock running from now. Its
    difficulty stays hidden until it is over."""
    topics = (body.topic,) if body.topic else ()
    exercise = coding_rounds.choose(scope, topics=topics, now=now)
    found = coding_rounds.create(scope, exercise, minutes=body.minutes, start=True, now=now)
    view = coding_rounds.load(scope, found.id, now=now)
    scope.session.commit()
    return CodingRoundPublic.of(view)


@router.get("/{round_id}", responses=errors(401, 404))
def get_round(round_id: str, scope: ReaderDep, now: NowDep) -> CodingRoundPublic:
    """The round as it stands (closed at its deadline if that has passed)."""
    view = coding_rounds.load(scope, round_id, now=now)
    scope.session.commit()
    return CodingRoundPublic.of(view)


@router.post("/{round_id}/finish", responses=errors(401, 403, 404, 409))
def finish_round(round_id: str, scope: ReaderDep, now: NowDep) -> CodingRoundPublic:
    """End the round now: its last submit is its result."""
    view = coding_rounds.finish(scope, round_id, now=now)
    scope.session.commit()
    return CodingRoundPublic.of(view)


@router.post(
    "/{round_id}/submissions",
    status_code=202,
    responses=errors(400, 401, 403, 404, 409, 413, 422, 429, 503),
)
async def submit(
    round_id: str,
    body: SubmissionCreate,
    identity: IdentityDep,
    client: ClientDep,
    engine: EngineDep,
    queue: RunQueueDep,
    limiter: RunLimiterDep,
    settings: SettingsDep,
    now: NowDep,
    idempotency_key: IdempotencyKey = None,
) -> RunAccepted:
    """Grade code against the round's exercise, as POST /api/exercises/{slug}/submissions
    does (follow it there); refused (409) once the round is over. The last `submit` the
    round accepts is its result."""
    slug = await asyncio.to_thread(coding_rounds.admit, engine, identity, round_id, now=now)
    submitted = await round_drafts.submit_to_round(
        engine,
        queue,
        limiter,
        identity,
        round_id,
        slug=slug,
        code=body.code,
        backend=body.backend,
        mode=body.mode,
        content_dir=settings.content_dir,
        client=client,
        token_secret=settings.resolved_secret_key(),
        idempotency_key=idempotency_key,
    )
    return RunAccepted.of(submitted)
