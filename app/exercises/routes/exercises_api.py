"""Code exercises in the JSON API: the list, one exercise, submissions (runs with a grading
payload: started, read and followed as runs are) and the solution on request."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, Query
from fastapi.responses import StreamingResponse

from app.deps import (
    ClientDep,
    EngineDep,
    IdempotencyKey,
    IdentityDep,
    LearnerDep,
    NowDep,
    ReaderDep,
    RunLimiterDep,
    RunQueueDep,
    SettingsDep,
    StreamSlotsDep,
    WriterDep,
    identify,
)
from app.domain import DomainError, LearnerScope
from app.exercises import catalogue, coding_rounds, hints, solutions, submissions
from app.exercises.schemas.exercises import (
    ExercisePublic,
    ExerciseStatus,
    ExerciseSummary,
    HintRequest,
    HintShown,
    HintsPublic,
    SolutionPublic,
    SolutionRequest,
    SubmissionAccepted,
    SubmissionCreate,
    SubmissionPublic,
)
from app.models import Run
from app.runs import run_stream
from app.runs.run_origin import origin_for
from app.runs.schemas import RunAccepted
from app.web.schemas import errors

router = APIRouter(prefix="/api/exercises", tags=["exercises"], dependencies=[Depends(identify)])

Topic = Annotated[str | None, Query(max_length=64, description="Topic slug.")]


async def _run_token(
    x_run_token: Annotated[str | None, Header(max_length=64)] = None,
    token: Annotated[str | None, Query(max_length=64)] = None,
) -> str | None:
    """The capability token a cookie-less client was given for its submission."""
    return x_run_token or token


RunToken = Annotated[str | None, Depends(_run_token)]


@router.get("", responses=errors(401, 422))
def list_exercises(
    engine: EngineDep,
    scope: ReaderDep,
    topic: Topic = None,
    difficulty: Literal["easy", "medium", "hard"] | None = None,
    status: ExerciseStatus | None = None,
    q: Annotated[
        str | None,
        Query(
            max_length=catalogue.MAX_QUERY_LENGTH,
            description="Words that the title, the statement or the function name must all hold.",
        ),
    ] = None,
) -> list[ExerciseSummary]:
    """Every exercise in the set's order, with the asker's status on each (solved once a
    Submit passed every test; solved-with-hints or solved-after-reveal when a hint or the
    solution was shown before that), narrowed by the filters given; a search lists the
    exercises with every word in the title first."""
    with engine.connect() as connection:
        rows = catalogue.listing(
            connection,
            scope.learner_id,
            topic=topic,
            difficulty=difficulty,
            status=status,
            query=q,
        )
    return [ExerciseSummary.of(r) for r in rows]


@router.get("/{slug}", responses=errors(401, 404))
def get_exercise(slug: str, engine: EngineDep) -> ExercisePublic:
    """The statement, the starter and the visible tests; never the reference, the hidden
    tests or the mutants."""
    with engine.connect() as connection:
        return ExercisePublic.of(catalogue.one(connection, slug))


def _no_help_during_round(scope: LearnerScope, slug: str, now: datetime, what: str) -> None:
    """A running coding round on this exercise gets no hint and no solution (409)."""
    if coding_rounds.is_open(scope.session, scope.learner_id, slug, now=now):
        raise coding_rounds.HelpDuringRound(what)


@router.get("/{slug}/hints", responses=errors(401, 404, 409))
def get_hints(slug: str, scope: ReaderDep, settings: SettingsDep, now: NowDep) -> HintsPublic:
    """The hints shown to the asker so far, and what the next one would be (its level and
    the test category it answers, not its text). After a failing submission the next one
    answers a failing test's category. Refused (409) while the asker's coding round on this
    exercise runs."""
    _no_help_during_round(scope, slug, now, "hints")
    return HintsPublic.of(hints.state(scope, settings.content_dir, slug))


@router.post("/{slug}/hints", responses=errors(400, 401, 403, 404, 409, 422))
def show_hint(
    slug: str,
    scope: WriterDep,
    identity: IdentityDep,
    settings: SettingsDep,
    now: NowDep,
    body: HintRequest | None = None,
) -> HintShown:
    """Show the next hint (or the next one of `category`), in level order: concept, then
    approach, then a near-complete step. Recorded the first time it is shown; 409 when none
    is left, or while the asker's coding round on this exercise runs."""
    _no_help_during_round(scope, slug, now, "hints")
    hint, state = hints.show_next(
        scope,
        settings.content_dir,
        slug,
        visitor=identity.owner_key,
        category=body.category if body else None,
    )
    scope.session.commit()
    shown = HintsPublic.of(state)
    number = next(h.number for h in shown.shown if h.index == hint.index)
    return HintShown(**shown.model_dump(), hint=shown.shown[number - 1])


@router.post("/{slug}/solution", responses=errors(400, 401, 403, 404, 409, 422))
def reveal_solution(
    slug: str,
    scope: WriterDep,
    identity: IdentityDep,
    settings: SettingsDep,
    now: NowDep,
    body: SolutionRequest | None = None,
) -> SolutionPublic:
    """The reference solution, its editorial, and your last submitted code beside it. Shown
    after a failed Submit, or when you give up (`give_up: true`); 409 otherwise, and while
    the asker's coding round on this exercise runs. The reveal is recorded (it is part of
    the asker's export); once revealed, it is shown again."""
    _no_help_during_round(scope, slug, now, "solution")
    solution = solutions.reveal(
        scope,
        settings.content_dir,
        slug,
        visitor=identity.owner_key,
        give_up=bool(body and body.give_up),
    )
    scope.session.commit()
    return SolutionPublic.of(solution)


@router.get("/{slug}/solution", responses=errors(401, 404, 409))
def get_solution(slug: str, scope: ReaderDep, settings: SettingsDep, now: NowDep) -> SolutionPublic:
    """The solution again, once it has been revealed to the asker; 409 before, and while
    the asker's coding round on this exercise runs."""
    catalogue.one(scope.session.connection(), slug)
    _no_help_during_round(scope, slug, now, "solution")
    solution = solutions.revealed(scope, settings.content_dir, slug)
    if solution is None:
        raise solutions.SolutionRefused()
    return SolutionPublic.of(solution)


@router.post(
    "/{slug}/submissions", status_code=202, responses=errors(400, 401, 403, 404, 413, 422, 429, 503)
)
async def submit(
    slug: str,
    body: SubmissionCreate,
    identity: IdentityDep,
    client: ClientDep,
    engine: EngineDep,
    queue: RunQueueDep,
    limiter: RunLimiterDep,
    settings: SettingsDep,
    idempotency_key: IdempotencyKey = None,
) -> SubmissionAccepted:
    """Grade code against the exercise: `run` its visible tests, or `submit` to every test.
    It is a run (limits, ownership and `Idempotency-Key` as POST /api/runs); follow it at
    /api/exercises/{slug}/submissions/{id}/events, where each test's result comes as it ends.
    Backend `both` grades the code on the CPU and on the GPU at once: `paired` is the GPU's
    submission, or `absent` says why there is none. A client with neither cookies nor a
    bearer token gets a capability token in the answer (one per submission)."""
    absent: dict[str, str] = {}
    backends: list[str] = [body.backend]
    if body.backend == "both":
        status = await queue.status()
        devices = await asyncio.to_thread(submissions.side_by_side, engine, slug, status)
        backends, absent = devices.backends, dict(devices.absent)
    # Checked before the asker's learner is made: a refused submission records nothing.
    prepared = [
        await asyncio.to_thread(
            submissions.prepare,
            engine,
            settings.content_dir,
            slug=slug,
            code=body.code,
            backend=backend,
            mode=body.mode,
        )
        for backend in backends
    ]
    origin = await asyncio.to_thread(
        origin_for, engine, identity, client=client, item_slug=None, sample=None
    )
    accepted: list[RunAccepted] = []
    for n, (backend, grading) in enumerate(prepared):
        try:
            submitted = await submissions.submit(
                engine,
                queue,
                limiter,
                code=body.code,
                backend=backend,
                grading=grading,
                origin=origin,
                token_secret=settings.resolved_secret_key(),
                idempotency_key=(
                    idempotency_key if n == 0 else submissions.twin_key(idempotency_key, backend)
                ),
            )
        except DomainError as exc:
            if n == 0:
                raise
            absent[backend] = exc.message  # the first is graded; say why its twin is not
            continue
        accepted.append(RunAccepted.of(submitted))
    first, *twin = accepted
    return SubmissionAccepted(**first.model_dump(), paired=twin[0] if twin else None, absent=absent)


@router.get("/{slug}/submissions/{submission_id}", responses=errors(401, 404))
def get_submission(
    slug: str, submission_id: str, scope: LearnerDep, token: RunToken, engine: EngineDep
) -> SubmissionPublic:
    """The submission as it stands: every test's result once it is graded."""
    return SubmissionPublic.of(submissions.owned(engine, scope, slug, submission_id, token=token))


@router.get(
    "/{slug}/submissions/{submission_id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}, **errors(401, 404, 429)},
)
async def submission_events(
    slug: str,
    submission_id: str,
    scope: LearnerDep,
    token: RunToken,
    identity: IdentityDep,
    engine: EngineDep,
    queue: RunQueueDep,
    slots: StreamSlotsDep,
    last_event_id: Annotated[str | None, Header(max_length=64)] = None,
) -> StreamingResponse:
    """Server-sent events: queued, started, `test` (one per test as it ends: name,
    category, hidden, status, message), stdout, stderr, then result (the submission).
    Resumable with Last-Event-ID, as a run's stream is."""
    await asyncio.to_thread(submissions.owned, engine, scope, slug, submission_id, token=token)
    ticket = await asyncio.to_thread(slots.take, identity.owner_key)

    async def stream() -> AsyncIterator[str]:
        try:
            async for frame in run_stream.sse_frames(
                engine, queue, submission_id, last_event_id, _public
            ):
                yield frame
        finally:
            # Handed to a thread and not awaited: this runs as the stream is torn down.
            asyncio.get_running_loop().run_in_executor(None, slots.give_back, ticket)

    return StreamingResponse(
        stream(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


def _public(run: Run) -> dict[str, Any]:
    return SubmissionPublic.of(run).model_dump()
