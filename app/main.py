"""Build the application: settings in, a FastAPI app out."""

from __future__ import annotations

import fcntl
import gc
import logging
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app import migrate
from app.db import make_engine
from app.errors import DomainError
from app.identity import SignInRequired
from app.importer import import_content
from app.routes import accounts, api, me, pages, progress, runs
from app.sandbox_client import SandboxClient
from app.services.accounts import BadCredentials, InvalidToken
from app.services.ratelimit import AccountLimits, RateLimited, RunLimiter
from app.services.runs import RunHub, RunRejected, SandboxBusy
from app.settings import DATA_DIR, Settings
from app.static_files import VersionedStaticFiles
from app.visitors import VisitorCookie
from app.web import STATIC_DIR, asset_url, render

log = logging.getLogger("backprop")

SECURITY_HEADERS = [
    # Everything the pages need is served from here: no inline script, no CDN.
    (
        b"content-security-policy",
        # style-src-attr: the code editor (and the browser's own editing of it) sets style
        # attributes; <style> elements and stylesheets from elsewhere stay blocked.
        b"default-src 'self'; script-src 'self'; style-src 'self'; style-src-attr 'unsafe-inline'; "
        b"img-src 'self' data:; "
        b"connect-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'; "
        b"form-action 'self'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
]
# The interactive API page (Swagger UI, served from static/) starts itself with an inline
# script and styles; only that one exact path allows inline code.
DOCS_CSP = (
    b"default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    b"img-src 'self' data:; object-src 'none'; base-uri 'self'; frame-ancestors 'none'"
)
SWAGGER = "vendor/swagger-ui-5.35.0"


class SecurityHeaders:
    """Adds the headers above to every response (plain ASGI: cheaper than BaseHTTPMiddleware)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = SECURITY_HEADERS
        if scope["path"] == "/docs":
            headers = [(b"content-security-policy", DOCS_CSP), *SECURITY_HEADERS[1:]]

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *headers]
            await send(message)

        await self.app(scope, receive, send_with_headers)


@contextmanager
def startup_lock() -> Iterator[None]:
    """An exclusive lock on ./data/.startup.lock for as long as the block runs."""
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    with open(DATA_DIR / ".startup.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def create_app(settings: Settings | None = None) -> FastAPI:
    """The app for `settings` (read from the environment when not given)."""
    settings = settings or Settings()
    engine = make_engine(settings.database_url)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # With several server processes, one migrates and imports while the others wait.
        with startup_lock():
            migrate.upgrade(engine)
            if settings.import_on_start:
                report = import_content(engine, settings.content_dir)
                log.info("content: %s", report.summary())
        app.state.runs = RunHub(
            client=app.state.sandbox,
            engine=engine,
            limiter=RunLimiter(
                per_minute=settings.runs_per_minute, concurrent=settings.concurrent_runs
            ),
        )
        # Everything loaded so far (modules, templates, compiled statements) lives as long as
        # the process. Freezing it keeps the garbage collector's full passes from walking it
        # again and again, which showed up as 100 ms pauses under load (bench/http_load.py).
        gc.collect()
        gc.freeze()
        yield
        await app.state.runs.close()
        engine.dispose()

    app = FastAPI(
        title="Backprop",
        summary="Prepare for deep-learning and PyTorch interviews.",
        version="0.1.0",
        lifespan=lifespan,
        docs_url=None,  # served below, with Swagger UI from static/ instead of a CDN
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.engine = engine
    app.state.secret_key = settings.resolved_secret_key()
    app.state.account_limits = AccountLimits()
    app.state.sandbox = SandboxClient(settings.sandbox_socket)
    app.add_middleware(VisitorCookie)
    app.add_middleware(SecurityHeaders)
    app.mount("/static", VersionedStaticFiles(directory=STATIC_DIR), name="static")
    # Routes are tried in order, each included router scanning all of its own: the pages go
    # first (no path of theirs overlaps another's), so the item page is found without first
    # testing every API route.
    app.include_router(pages.router)
    app.include_router(api.router)
    app.include_router(runs.router)
    app.include_router(me.router)
    app.include_router(progress.router)
    app.include_router(accounts.router)

    @app.get("/docs", include_in_schema=False)
    async def api_docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="Backprop API",
            swagger_js_url=asset_url(f"{SWAGGER}/swagger-ui-bundle.js"),
            swagger_css_url=asset_url(f"{SWAGGER}/swagger-ui.css"),
            swagger_favicon_url=asset_url("icons/backprop.svg"),
        )

    _add_error_handlers(app)
    return app


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api")


def _error(
    request: Request, status: int, message: str, headers: Mapping[str, str] | None = None
) -> Response:
    if _wants_json(request):
        response: Response = JSONResponse({"detail": message}, status_code=status)
    else:
        response = render(
            request,
            "errors/error.html",
            {"status": status, "message": message},
            fragment="errors/_error.html",
            status_code=status,
        )
    response.headers.update(headers or {})
    return response


def _rejected(message: str) -> Response:
    """Code that will never run: 400, with the sandbox's verdict name for it."""
    return JSONResponse({"detail": message, "verdict": "rejected"}, status_code=400)


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(DomainError)
    async def domain_error(request: Request, exc: DomainError) -> Response:
        if isinstance(exc, RunRejected):
            return _rejected(exc.message)
        headers = None
        if isinstance(exc, SignInRequired) and not _wants_json(request):
            return RedirectResponse(f"/signin?next={quote(request.url.path)}", status_code=303)
        if isinstance(exc, SignInRequired):
            message = "Authentication required: send a bearer token from POST /api/token."
            return _error(request, 401, message, {"WWW-Authenticate": "Bearer"})
        if isinstance(exc, InvalidToken | BadCredentials) and _wants_json(request):
            headers = {"WWW-Authenticate": 'Bearer error="invalid_token"'}
        if isinstance(exc, SandboxBusy):
            headers = {"Retry-After": str(exc.retry_after_seconds)}
        return _error(request, exc.status, exc.message, headers)

    @app.exception_handler(RateLimited)
    async def rate_limited(request: Request, exc: RateLimited) -> Response:
        return _error(request, 429, exc.message, {"Retry-After": str(exc.retry_after_seconds)})

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 404:
            return _error(request, 404, "There is no page at this address.")
        if exc.status_code == 400 and request.url.path == "/api/runs":
            return _rejected("Rejected: the request body is not valid JSON in UTF-8.")
        return _error(request, exc.status_code, str(exc.detail), exc.headers)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        if request.url.path == "/api/runs" and any(
            e["type"] == "json_invalid" for e in exc.errors()
        ):
            return JSONResponse(
                {
                    "detail": "Rejected: the request body is not valid JSON in UTF-8.",
                    "verdict": "rejected",
                },
                status_code=400,
            )
        if _wants_json(request):
            return JSONResponse({"detail": jsonable_encoder(exc.errors())}, status_code=422)
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'][1:])}: {e['msg']}" for e in exc.errors()
        )
        return _error(
            request, 422, f"Some of the values in this address are not valid ({problems})."
        )
