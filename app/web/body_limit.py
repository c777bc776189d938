"""Request bodies are capped before they are read: a declared length over the cap is
answered 413 at once, and a body without one (chunked) is counted as it arrives and cut off
at the cap, so the process never holds more of a body than the cap, whatever a client sends."""

from __future__ import annotations

import json

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send


def _too_large(limit: int) -> str:
    return f"The request body is larger than this address accepts ({limit // 1024} KiB)."


class BodyLimit:
    """`limits` maps exact paths to their cap, `suffixes` the ends of paths (a path with an
    id in it: /api/exercises/{slug}/submissions); every other path gets `default_bytes`."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        default_bytes: int,
        limits: dict[str, int],
        suffixes: dict[str, int] | None = None,
    ) -> None:
        self.app = app
        self.default_bytes = default_bytes
        self.limits = limits
        self.suffixes = suffixes or {}

    def limit_for(self, path: str) -> int:
        if path in self.limits:
            return self.limits[path]
        ends = (cap for suffix, cap in self.suffixes.items() if path.endswith(suffix))
        return next(ends, self.default_bytes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["path"])
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await _refuse(scope, send, limit)
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    # Raised inside the handler's read of the body: the app's error handlers
                    # answer it like any 413, and the rest of the body is never read.
                    raise HTTPException(413, _too_large(limit))
            return message

        await self.app(scope, counted, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers") or []:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _refuse(scope: Scope, send: Send, limit: int) -> None:
    """413 without reading the body; JSON for the API, plain text elsewhere."""
    is_api = scope["path"].startswith("/api/")
    body = (
        json.dumps({"detail": _too_large(limit)}).encode() if is_api else _too_large(limit).encode()
    )
    content_type = b"application/json" if is_api else b"text/plain; charset=utf-8"
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", content_type),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
