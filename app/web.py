"""Templates and the one rule for answering the browser: one URL, two shapes."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from app.settings import PROJECT_ROOT

templates = Jinja2Templates(directory=PROJECT_ROOT / "templates")
templates.env.trim_blocks = True
templates.env.lstrip_blocks = True


def is_htmx(request: Request) -> bool:
    """A request htmx made to swap part of the page (not a boosted full navigation)."""
    return request.headers.get("HX-Request") == "true" and "HX-Boosted" not in request.headers


def render(
    request: Request,
    page: str,
    context: dict[str, Any],
    *,
    fragment: str | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    """The full `page`, or just `fragment` when htmx asks; caches keep the two apart."""
    name = fragment if fragment and is_htmx(request) else page
    response = templates.TemplateResponse(request, name, context, status_code=status_code)
    response.headers["Vary"] = "HX-Request"
    return response
