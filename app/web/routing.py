"""Routes the app declares without FastAPI's endpoint handling (app/reader/routes/item_page.py)."""

from __future__ import annotations

from starlette.routing import Match, Route
from starlette.types import Scope


class NamedRoute(Route):
    """A Starlette route that names itself in the request's scope, as FastAPI's routes do:
    FastAPI's router leaves that to the route, and the request's metrics and access line
    read it (app/web/request_id.py: route_of)."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        match, child_scope = super().matches(scope)
        if match is not Match.NONE:
            child_scope["route"] = self
        return match, child_scope
