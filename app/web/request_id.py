"""Each request gets an id: the client's or proxy's `X-Request-ID` when it is a sane token,
else a fresh one. It is bound to every log line the request causes, sent back in the
response's `X-Request-ID`, and closes the request with one access line (method, route,
status, milliseconds), since uvicorn's own access log is switched off."""

from __future__ import annotations

import logging
import re
import secrets
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.logs import bound

access = logging.getLogger("backprop.access")
SANE_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")


def request_id_of(scope: Scope) -> str:
    for name, value in scope.get("headers", []):
        if name == b"x-request-id":
            given: str = value.decode("latin-1")
            if SANE_ID.fullmatch(given):
                return given
    return secrets.token_hex(8)


class RequestId:
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
                headers = list(message.get("headers", []))
                headers.append((b"x-request-id", request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        with bound(request_id=request_id):
            try:
                await self.app(scope, receive, send_with_id)
            finally:
                route = scope.get("route")
                access.info(
                    "%s %s %d",
                    scope["method"],
                    scope["path"],
                    status,
                    extra={
                        "method": scope["method"],
                        "path": scope["path"],
                        "route": getattr(route, "path", None),
                        "status": status,
                        "duration_ms": round(1000 * (time.perf_counter() - started), 2),
                    },
                )
