"""One way to answer an error: a page, an htmx fragment, or JSON under /api.

Every domain error carries its status, headers and extra JSON fields (app/domain.py), so
the handlers below know no error class by name but SignInRequired, which sends a browser to
the sign-in page instead of showing it an error."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.domain import DomainError, SignInRequired
from app.web.templating import render


def wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/") or request.url.path == "/api"


def error_response(
    request: Request,
    status: int,
    message: str,
    *,
    headers: Mapping[str, str] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Response:
    """The error as JSON ({"detail": message, ...extra}) for the API, else as a page (or
    the fragment htmx swaps in)."""
    if wants_json(request):
        response: Response = JSONResponse({"detail": message, **(extra or {})}, status)
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


def add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(DomainError)
    async def domain_error(request: Request, exc: DomainError) -> Response:
        if isinstance(exc, SignInRequired) and not wants_json(request):
            return RedirectResponse(f"/signin?next={quote(request.url.path)}", status_code=303)
        return error_response(
            request, exc.status, exc.message, headers=exc.headers, extra=exc.extra
        )

    # The database could not serve the request in time: every pooled connection was busy
    # (PoolTimeout), or SQLite's write lock stayed taken past its busy timeout. Nothing was
    # changed; the client may simply try again.
    busy = "The server is busy; nothing was changed. Try again in a moment."

    @app.exception_handler(PoolTimeout)
    async def pool_exhausted(request: Request, exc: PoolTimeout) -> Response:
        return error_response(request, 503, busy, headers={"Retry-After": "2"})

    @app.exception_handler(OperationalError)
    async def database_locked(request: Request, exc: OperationalError) -> Response:
        if "database is locked" not in str(exc.orig):
            raise exc
        return error_response(request, 503, busy, headers={"Retry-After": "2"})

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 404:
            return error_response(request, 404, "There is no page at this address.")
        return error_response(request, exc.status_code, str(exc.detail), headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        if wants_json(request):
            return JSONResponse({"detail": jsonable_encoder(exc.errors())}, status_code=422)
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'][1:])}: {e['msg']}" for e in exc.errors()
        )
        return error_response(
            request, 422, f"Some of the values in this address are not valid ({problems})."
        )
