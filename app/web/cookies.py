"""The cookies a browser carries, and what each request derives from them before routing:
the visitor key (who a guest is) and the CSRF token its forms must send back."""

from __future__ import annotations

import base64
import hashlib
import hmac
import ssl

from fastapi import Request
from starlette.requests import cookie_parser
from starlette.types import ASGIApp, Message, Receive, Scope, Send

VISITOR_COOKIE = "backprop_visitor"
SESSION_COOKIE = "backprop_session"
ONE_YEAR_SECONDS = 365 * 24 * 3600
NEW_VISITOR_KEY = "backprop.new_visitor"  # scope key: the cookie this response is setting
CSRF_KEY = "backprop.csrf"  # scope key: this request's CSRF token
MASKED_CSRF_KEY = "backprop.csrf_masked"  # scope key: the same, as this response's forms send it


def random_bytes(count: int) -> bytes:
    """`count` bytes from OpenSSL's CSPRNG (reseeded after a fork), for the secrets made on
    the event loop's thread at every request: a new visitor's key and each CSRF mask.
    os.urandom (behind the `secrets` module) lets go of the GIL for its system call, and on
    one core the loop then waits to get it back from a worker thread: under wrk that wait
    was about a sixth of the loop thread's samples (py-spy, wall clock). RAND_bytes keeps
    the GIL."""
    return ssl.RAND_bytes(count)


def random_token(count: int) -> str:
    """`count` random bytes as URL-safe text, as secrets.token_urlsafe writes them."""
    return base64.urlsafe_b64encode(random_bytes(count)).rstrip(b"=").decode("ascii")


def visitor_key(request: Request) -> str:
    """A stable, opaque key for the visitor (never the raw cookie)."""
    token = request.cookies.get(VISITOR_COOKIE) or request.scope.get(NEW_VISITOR_KEY)
    if not token:
        token = f"addr:{request.client.host if request.client else 'unknown'}"
    return hashlib.sha256(str(token).encode()).hexdigest()[:32]


def csrf_token(request: Request) -> str:
    """The token this request's pages put in their forms: the request's token (computed by
    RequestCookies) masked with fresh random bytes for every response. Pages are
    gzip-compressed and may echo what a request sent (a search): a secret that read the
    same in every answer could be guessed from the compressed sizes (BREACH); a masked one
    never repeats from one answer to the next. Masked once per request, where the first form
    asks: a signed-in item page has a dozen forms, and each mask cost a random read."""
    masked: str | None = request.scope.get(MASKED_CSRF_KEY)
    if masked is None:
        token = bytes.fromhex(request.scope.get(CSRF_KEY, ""))
        pad = random_bytes(len(token))
        mixed = int.from_bytes(pad) ^ int.from_bytes(token)
        masked = pad.hex() + mixed.to_bytes(len(token)).hex()
        request.scope[MASKED_CSRF_KEY] = masked
    return masked


def csrf_matches(request: Request, sent: str) -> bool:
    """Whether `sent` is this request's token, masked (csrf_token) or as it is."""
    expected: str = request.scope.get(CSRF_KEY, "")
    if not expected or not sent:
        return False
    if len(sent) == 2 * len(expected):
        try:
            raw = bytes.fromhex(sent)
        except ValueError:
            return False
        half = len(raw) // 2
        sent = bytes(a ^ b for a, b in zip(raw[:half], raw[half:], strict=True)).hex()
    return hmac.compare_digest(sent.encode(), expected.encode())


def _cookies(scope: Scope) -> dict[str, str]:
    """The request's cookies, parsed as Starlette's `request.cookies` parses them."""
    for name, value in scope.get("headers") or []:
        if name == b"cookie":
            return cookie_parser(value.decode("latin-1"))
    return {}


class RequestCookies:
    """Gives every browser without one a visitor cookie (HttpOnly, SameSite=Lax), and works
    out the request's CSRF token: an HMAC of the visitor and sign-in cookies with the secret
    key, so another site can neither read it nor forge it, and signing in or out changes it.
    Plain ASGI: cheaper than BaseHTTPMiddleware."""

    def __init__(self, app: ASGIApp, *, secret_key: str) -> None:
        self.app = app
        self.key = secret_key.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith("/static/"):
            await self.app(scope, receive, send)
            return
        cookies = _cookies(scope)
        visitor = cookies.get(VISITOR_COOKIE)
        new_cookie: bytes | None = None
        if not visitor and not scope["path"].startswith("/api/"):
            visitor = random_token(24)
            scope[NEW_VISITOR_KEY] = visitor
            secure = "; Secure" if scope.get("scheme") == "https" else ""
            new_cookie = (
                f"{VISITOR_COOKIE}={visitor}; Path=/; Max-Age={ONE_YEAR_SECONDS}; HttpOnly; "
                f"SameSite=Lax{secure}"
            ).encode()
        message = f"{visitor or ''}|{cookies.get(SESSION_COOKIE, '')}".encode()
        scope[CSRF_KEY] = hmac.new(self.key, message, hashlib.sha256).hexdigest()[:40]
        if new_cookie is None:
            await self.app(scope, receive, send)
            return

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"set-cookie", new_cookie)]
            await send(message)

        await self.app(scope, receive, send_with_cookie)
