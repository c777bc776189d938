"""Routes the app declares without FastAPI's endpoint handling (app/reader/routes/item_page.py)."""

from __future__ import annotations

from typing import TypeVar

from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.routing import Match, Route
from starlette.types import Scope

Query = TypeVar("Query", bound=BaseModel)


class NamedRoute(Route):
    """A Starlette route that names itself in the request's scope, as FastAPI's routes do:
    FastAPI's router leaves that to the route, and the request's metrics and access line
    read it (app/web/request_id.py: route_of)."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        match, child_scope = super().matches(scope)
        if match is not Match.NONE:
            child_scope["route"] = self
        return match, child_scope


def query_values(request: Request, model: type[Query]) -> Query:
    """The query string's values (the last of repeated ones; a missing one takes the model's
    default) as `model` validates them: what FastAPI does for a route's query parameters. A
    value is refused with pydantic's own error, as FastAPI refuses it
    (RequestValidationError, 422), which the app's handler words for a page."""
    given = request.query_params
    values = {name: given[name] for name in model.model_fields if name in given}
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        raise RequestValidationError(
            [{**error, "loc": ("query", *error["loc"])} for error in exc.errors(include_url=False)]
        ) from None
