"""Build the application: settings in, a FastAPI app out."""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app import migrate
from app.db import make_engine
from app.errors import DomainError
from app.importer import import_content
from app.routes import api, pages
from app.settings import Settings
from app.static_files import VersionedStaticFiles
from app.web import STATIC_DIR, render

log = logging.getLogger("backprop")

SECURITY_HEADERS = [
    # Everything the pages need is served from here: no inline script, no CDN.
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'; "
        b"form-action 'self'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
]
# The interactive API page loads its own assets; it gets the default policy of the framework.
_CSP_EXEMPT = ("/docs", "/redoc", "/openapi.json")


class SecurityHeaders:
    """Adds the headers above to every response (plain ASGI: cheaper than BaseHTTPMiddleware)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(_CSP_EXEMPT):
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)


def create_app(settings: Settings | None = None) -> FastAPI:
    """The app for `settings` (read from the environment when not given)."""
    settings = settings or Settings()
    engine = make_engine(settings.database_url)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        migrate.upgrade(engine)
        if settings.import_on_start:
            report = import_content(engine, settings.content_dir)
            log.info("content: %s", report.summary())
        # Everything loaded so far (modules, templates, compiled statements) lives as long as
        # the process. Freezing it keeps the garbage collector's full passes from walking it
        # again and again, which showed up as 100 ms pauses under load (bench/http_load.py).
        gc.collect()
        gc.freeze()
        yield
        engine.dispose()

    app = FastAPI(
        title="Backprop",
        summary="Prepare for deep-learning and PyTorch interviews.",
        version="0.1.0",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.engine = engine
    app.add_middleware(SecurityHeaders)
    app.mount("/static", VersionedStaticFiles(directory=STATIC_DIR), name="static")
    app.include_router(api.router)
    app.include_router(pages.router)
    _add_error_handlers(app)
    return app


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api")


def _error(request: Request, status: int, message: str) -> Response:
    if _wants_json(request):
        return JSONResponse({"detail": message}, status_code=status)
    return render(
        request,
        "errors/error.html",
        {"status": status, "message": message},
        fragment="errors/_error.html",
        status_code=status,
    )


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(DomainError)
    async def domain_error(request: Request, exc: DomainError) -> Response:
        return _error(request, exc.status, exc.message)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 404:
            return _error(request, 404, "There is no page at this address.")
        return _error(request, exc.status_code, str(exc.detail))

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        if _wants_json(request):
            return JSONResponse({"detail": exc.errors()}, status_code=422)
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'][1:])}: {e['msg']}" for e in exc.errors()
        )
        return _error(
            request, 422, f"Some of the values in this address are not valid ({problems})."
        )
