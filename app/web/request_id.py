"""Each request, as it ends: its id, its time, and one access line.

The id is the client's or proxy's `X-Request-ID` when it is a sane token, else a fresh one.
It is bound to every log line the request causes and sent back in the response's
`X-Request-ID`. The time goes to Prometheus by route template (never the raw path, which
would make a time series per item or run id), and the access line (method, path, route,
status, milliseconds) replaces uvicorn's own, which is switched off."""

from __future__ import annotations

import logging
import random
import re
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app import metrics
from app.logs import bound

access = logging.getLogger("backprop.access")
SANE_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")


def request_id_of(scope: Scope) -> str:
    for name, value in scope.get("headers", []):
        if name == b"x-request-id":
            given: str = value.decode("latin-1")
            if SANE_ID.fullmatch(given):
                return given
    # A label to find a request's lines by, not a secret: the process's own generator (fresh
    # in each worker after a fork) rather than the kernel's. os.urandom let go of the GIL on
    # the event loop's thread at every request, and getting it back behind a worker thread
    # showed as a tenth of the loop's time in a profile under load.
    return f"{random.getrandbits(64):016x}"


def route_of(scope: Scope) -> str:
    """The route template that answered (set by the router), or what stands for none."""
    route = getattr(scope.get("route"), "path", None)
    if route is None:
        route = "/static" if scope["path"].startswith("/static/") else "unmatched"
    return str(route)


class RequestRecord:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = request_id_of(scope)
        started = time.perf_counter()
        status = 500  # what the client gets if the app raises before answering

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = [*message.get("headers", []), (b"x-request-id", request_id.encode())]
                message = {**message, "headers": headers}
            await send(message)

        with bound(request_id=request_id):
            try:
                await self.app(scope, receive, send_with_id)
            finally:
                seconds = time.perf_counter() - started
                route, method = route_of(scope), scope["method"]
                metrics.REQUEST_SECONDS.labels(method, route, f"{status // 100}xx").observe(seconds)
                access.info(
                    "%s %s %d",
                    method,
                    scope["path"],
                    status,
                    extra={
                        "method": method,
                        "path": scope["path"],
                        "route": route,
                        "status": status,
                        "duration_ms": round(1000 * seconds, 2),
                    },
                )
