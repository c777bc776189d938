"""Who is asking, for limits and for ownership of runs before accounts exist: a random
visitor cookie, or the client's address when there is none (API clients)."""

from __future__ import annotations

import hashlib
import secrets
from typing import Annotated

from fastapi import Depends, Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "backprop_visitor"
ONE_YEAR_SECONDS = 365 * 24 * 3600


def visitor_key(request: Request) -> str:
    """A stable, opaque key for the visitor (never the raw cookie)."""
    token = request.cookies.get(COOKIE) or request.scope.get("backprop.new_visitor")
    if not token:
        token = f"addr:{request.client.host if request.client else 'unknown'}"
    return hashlib.sha256(str(token).encode()).hexdigest()[:32]


VisitorDep = Annotated[str, Depends(visitor_key)]


class VisitorCookie:
    """Gives every browser without one a visitor cookie (HttpOnly, SameSite=Lax)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(("/static/", "/api/")):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        if COOKIE.encode() + b"=" in headers.get(b"cookie", b""):
            await self.app(scope, receive, send)
            return
        token = secrets.token_urlsafe(24)
        scope["backprop.new_visitor"] = token
        secure = "; Secure" if scope.get("scheme") == "https" else ""
        cookie = (
            f"{COOKIE}={token}; Path=/; Max-Age={ONE_YEAR_SECONDS}; HttpOnly; SameSite=Lax{secure}"
        ).encode()

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"set-cookie", cookie)]
            await send(message)

        await self.app(scope, receive, send_with_cookie)
