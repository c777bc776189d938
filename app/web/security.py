"""Headers every response carries: a strict content security policy and its companions."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

SECURITY_HEADERS = [
    # Everything the pages need is served from here: no inline script, no CDN.
    (
        b"content-security-policy",
        # style-src-attr: the code editor (and the browser's own editing of it) sets style
        # attributes; <style> elements and stylesheets from elsewhere stay blocked.
        b"default-src 'self'; script-src 'self'; style-src 'self'; style-src-attr 'unsafe-inline'; "
        b"img-src 'self' data:; "
        b"connect-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'; "
        b"form-action 'self'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
]
# The interactive API page (Swagger UI, served from static/) starts itself with an inline
# script and styles; only that one exact path allows inline code.
DOCS_PATH = "/docs"
DOCS_CSP = (
    b"default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    b"img-src 'self' data:; object-src 'none'; base-uri 'self'; frame-ancestors 'none'"
)


class SecurityHeaders:
    """Adds the headers above to every response (plain ASGI: cheaper than BaseHTTPMiddleware)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = SECURITY_HEADERS
        if scope["path"] == DOCS_PATH:
            headers = [(b"content-security-policy", DOCS_CSP), *SECURITY_HEADERS[1:]]

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = headers
                sent = message.get("headers", [])
                # Pages hold the reader's CSRF token and progress, API answers their data:
                # nothing may be kept by a shared cache or the browser's history cache, unless
                # the response chose its own policy (static files do).
                if not any(name == b"cache-control" for name, _ in sent):
                    extra = [*headers, (b"cache-control", b"no-store")]
                message["headers"] = [*sent, *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)
