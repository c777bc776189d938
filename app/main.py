"""Build the application: settings in, a FastAPI app out. The one place that picks the
adapters (which run queue) and wires the layers together."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio.to_thread
from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse

from app import migrate
from app.accounts.accounts import AccountGuards
from app.accounts.passwords import PasswordChecks
from app.accounts.routes import accounts, me, recovery
from app.admin.fleet import FleetKeeper
from app.admin.routes import admin, metrics
from app.db import HANDLER_THREADS, DatabaseClock, make_engine, startup_lock
from app.deps import AppState
from app.exercises import review
from app.exercises.routes import (
    admin_exercises,
    coding,
    coding_api,
    exercise_pages,
    exercises,
    exercises_api,
)
from app.importer import import_content
from app.interview.routes import mock, quizzes, review_api
from app.labs import labs
from app.labs.routes import labs_api
from app.library import content_cache
from app.library.routes import api
from app.platform.limit_store import HitStore
from app.platform.ratelimit import AccountLimits, RunLimiter
from app.progress import run_practice
from app.progress.visit_writer import VisitWriter
from app.reader.routes import dashboard, item_list, item_page, pages, study
from app.runqueue import RunQueue
from app.runqueue.fake import FakeRunQueue
from app.runqueue.fleet.queue import FleetTiming, RedisRunQueue
from app.runqueue.local import LocalRunQueue
from app.runs.orphans import end_orphans, sweep_forever
from app.runs.recorder import RunEnded, RunRecorder
from app.runs.routes import runs
from app.runs.stream_slots import StreamSlots
from app.settings import RunQueueKind, Settings
from app.study.routes import quizzes_api
from app.web.api_docs import SCHEMA_PATH, add_schema_route
from app.web.body_limit import BodyLimit
from app.web.compression import CompressDynamic
from app.web.cookies import RequestCookies
from app.web.errors import add_error_handlers
from app.web.request_id import RequestRecord
from app.web.security import DOCS_PATH, SecurityHeaders
from app.web.static import VersionedStaticFiles, start_precompressing
from app.web.templating import STATIC_DIR, asset_url, compile_all

log = logging.getLogger("backprop")
# What a run's end means to the features above the runs, in this order, in the transaction
# that stores its outcome: practice counted on the day and its items, the exercise's
# re-solving card, a lab's measurements.
RUN_ENDED: tuple[RunEnded, ...] = (
    run_practice.count_practice,
    review.record_solve,
    labs.record,
)
SWAGGER = "vendor/swagger-ui-5.35.0"
# The garbage collector looks at its youngest objects when their count passes this. At
# CPython's default, 700, the objects of the pages in flight (32 at once under load, a few
# hundred containers each) passed it every five pages. Each pass moved those live objects
# on to older generations, and every 600 pages or so a full pass walked everything that was
# not frozen: 12 to 17 ms in which no request moved. bench/http_load.py: 17 full passes in
# 8 s under 32 signed-in readers, 0.4 s of collecting in all.
# The app makes almost no cyclic garbage (30 objects in 10,000 pages), so a threshold
# above what is in flight at once costs at most a few megabytes before a pass.
YOUNG_GC_THRESHOLD = 10_000


def make_run_queue(settings: Settings, recorder: RunRecorder) -> RunQueue:
    """The run queue the settings ask for."""
    if settings.run_queue is RunQueueKind.fake:
        return FakeRunQueue(recorder)
    if settings.run_queue is RunQueueKind.redis:
        return RedisRunQueue(settings.redis_url, recorder, fleet_timing(settings))
    return LocalRunQueue(settings.sandbox_socket, recorder)


def fleet_timing(settings: Settings) -> FleetTiming:
    return FleetTiming(
        heartbeat_seconds=settings.fleet_heartbeat_seconds,
        lease_seconds=settings.fleet_lease_seconds,
        events_ttl_seconds=settings.fleet_events_ttl_seconds,
        max_wait_seconds=settings.fleet_max_wait_seconds,
    )


def create_app(settings: Settings | None = None) -> FastAPI:
    """The app for `settings` (read from the environment when not given)."""
    settings = settings or Settings()
    engine = make_engine(settings.database_url)
    hits = HitStore(engine)  # every count a limit keeps, shared by every replica
    limiter = RunLimiter(
        hits,
        per_minute=settings.runs_per_minute,
        concurrent=settings.concurrent_runs,
        per_minute_per_client=settings.runs_per_minute_per_client,
        concurrent_per_client=settings.concurrent_runs_per_client,
    )
    state = AppState(
        settings=settings,
        clock=DatabaseClock(engine),
        engine=engine,
        run_queue=make_run_queue(settings, RunRecorder(engine, on_end=RUN_ENDED)),
        run_limiter=limiter,
        stream_slots=StreamSlots(hits, settings.streams_per_visitor),
        account_guards=AccountGuards(
            AccountLimits(hits), PasswordChecks(settings.password_check_threads)
        ),
        visits=VisitWriter(engine),
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        anyio.to_thread.current_default_thread_limiter().total_tokens = HANDLER_THREADS
        # With several server processes (or replicas, on PostgreSQL), one migrates and
        # imports while the others wait.
        with startup_lock(engine, settings.data_dir):
            migrate.upgrade(engine)
            if settings.import_on_start:
                report = import_content(engine, settings.content_dir)
                log.info("content: %s", report.summary())
                content_cache.forget(engine)
            # A fleet's runs outlive the web process that took them: FleetKeeper watches them.
            ended = 0 if isinstance(state.run_queue, RedisRunQueue) else end_orphans(engine)
            if ended:
                log.warning("ended %d runs that a stopped server process left unfinished", ended)
        await state.run_queue.start()
        # Runs never stay stuck: on the fleet, the keeper ends runs whose machine is gone;
        # on one machine, the sweep ends runs whose server process is gone (one that died
        # after this start, or was still dying during it).
        if isinstance(state.run_queue, RedisRunQueue):
            fleet = FleetKeeper(engine, state.run_queue, settings.content_dir)
            keeper = asyncio.create_task(fleet.run_forever())
        else:
            keeper = asyncio.create_task(sweep_forever(engine))
        compile_all()
        # Compressing the static files takes seconds of CPU (brotli at its best): a thread
        # does it beside the first requests, at the lowest priority, and they compress on
        # demand what is not done yet.
        start_precompressing(STATIC_DIR)
        # Everything loaded so far (modules, templates, compiled statements) lives as long as
        # the process. Freezing it keeps the garbage collector's full passes from walking it
        # again and again, which showed up as 100 ms pauses under load (bench/http_load.py).
        gc.collect()
        gc.freeze()
        gc.set_threshold(YOUNG_GC_THRESHOLD, *gc.get_threshold()[1:])
        yield
        keeper.cancel()
        await state.run_queue.close()
        await asyncio.to_thread(state.visits.close)  # the repeat visits not written yet
        engine.dispose()

    app = FastAPI(
        title="Backprop",
        summary="Prepare for deep-learning and PyTorch interviews.",
        version="0.1.0",
        lifespan=lifespan,
        docs_url=None,  # served below, with Swagger UI from static/ instead of a CDN
        redoc_url=None,
        openapi_url=None,  # served below, built in a thread when /docs is first asked for
    )
    app.state.backprop = state
    # Added innermost first: headers and cookies wrap every answer, a 413 included.
    app.add_middleware(
        BodyLimit,
        default_bytes=settings.max_body_bytes,
        limits={"/api/runs": settings.max_run_body_bytes},
        # A submission to an exercise carries code as a run does.
        suffixes={"/submissions": settings.max_run_body_bytes},
    )
    app.add_middleware(RequestCookies, secret_key=settings.resolved_secret_key())
    app.add_middleware(SecurityHeaders)
    app.add_middleware(CompressDynamic)
    # Outermost: the time a client waits, compression included, and every log line of a
    # request carries its id.
    app.add_middleware(RequestRecord)
    app.mount("/static", VersionedStaticFiles(directory=STATIC_DIR), name="static")
    # Routes are tried in order, each included router scanning all of its own: the item page
    # and the list, the exercise list and page, then the other pages go first (no path of
    # theirs overlaps another's), so the pages read most are found without first testing
    # every API route.
    app.router.routes[:0] = [
        item_page.route,
        item_list.route,
        exercise_pages.list_route,
        exercise_pages.page_route,
    ]
    routers = (
        pages, exercises, api, runs, exercises_api, me, review_api, quizzes_api,
        labs_api, study, dashboard, quizzes, mock, coding, coding_api, admin, admin_exercises,
        accounts, recovery, metrics,
    )  # fmt: skip
    for module in routers:
        app.include_router(module.router)

    schema = add_schema_route(app)

    @app.get(DOCS_PATH, include_in_schema=False)
    async def api_docs() -> HTMLResponse:
        schema.start()  # the page asks for the schema next: its build begins now
        return get_swagger_ui_html(
            openapi_url=SCHEMA_PATH,
            title="Backprop API",
            swagger_js_url=asset_url(f"{SWAGGER}/swagger-ui-bundle.js"),
            swagger_css_url=asset_url(f"{SWAGGER}/swagger-ui.css"),
            swagger_favicon_url=asset_url("icons/backprop.svg"),
        )

    add_error_handlers(app)
    return app
