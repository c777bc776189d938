"""Templates and the one rule for answering the browser: one URL, two shapes."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from markupsafe import Markup, escape

from app.domain import Difficulty, Identity
from app.settings import PROJECT_ROOT
from app.web.cookies import csrf_token

STATIC_DIR = PROJECT_ROOT / "static"


class _AssetUrls(dict[str, str]):
    """/static/<path>?v=<hash of its bytes>, per path, made on first use and kept: browsers
    may cache the file for good, since any change to it changes the address. Cheaper than
    url_for, which walks the routes. Templates read it as `asset['css/app.css']`, a look-up
    rather than a call (a Jinja call costs twice as much, six times on every page)."""

    def __missing__(self, path: str) -> str:
        digest = hashlib.sha256((STATIC_DIR / path).read_bytes()).hexdigest()[:12]
        url = self[path] = f"/static/{path}?v={digest}"
        return url


ASSET_URLS = _AssetUrls()


def asset_url(path: str) -> str:
    """The address of the static file at `path`, with its content hash (see _AssetUrls)."""
    return ASSET_URLS[path]


# Inside a dotted or snake_case name (torch.nn.parallel.DistributedDataParallel,
# zero_grad(set_to_none=True)): after each dot or underscore between letters; only in a
# word too long to be sure of a phone's line (a heading's line there holds about 24
# characters), so that a short name (torch.nn.DataParallel) is never split needlessly.
_NAME_JOINT = re.compile(r"(?<=[A-Za-z])([._])(?=[A-Za-z])")
_LONG_WORD = re.compile(r"\S{25,}")


def breakable(text: object) -> Markup:
    """`text`, escaped, with a line-break opportunity (<wbr>) at each joint of a long dotted
    or snake_case name: a phone wraps it at its parts rather than mid-word (the CSS's
    overflow-wrap: anywhere stays the last resort). Copied text and screen readers are
    unchanged. Markup passes as it is: its dots may be inside tags."""
    if isinstance(text, Markup):
        return text
    return _breakable_text(text if isinstance(text, str) else str(text))


# The texts are the content's (titles, prompts, model answers), the same few hundred on
# every page: scanning a model answer for long words on each render cost 6% of a signed-in
# item page (py-spy under bench/http_load.py), a cached answer a dictionary look-up.
@lru_cache(maxsize=4096)
def _breakable_text(text: str) -> Markup:
    return Markup(
        _LONG_WORD.sub(lambda word: _NAME_JOINT.sub(r"\1<wbr>", word[0]), str(escape(text)))
    )


def viewer(request: Request) -> Identity | None:
    """Who the page is for, when the route resolved it (error pages may not have)."""
    identity: Identity | None = getattr(request.state, "identity", None)
    return identity


def due_for_review(request: Request) -> int:
    """Questions due for review, when the route counted them (app/deps.py: identify_for_page)."""
    due: int = getattr(request.state, "due_for_review", 0)
    return due


templates = Jinja2Templates(directory=PROJECT_ROOT / "templates")
templates.env.trim_blocks = True
# Templates are read once: checking each one's mtime at every render was a stat() call per
# template per page (7% of a signed-in page's time). Restart the server to see an edit.
templates.env.auto_reload = False
templates.env.lstrip_blocks = True
templates.env.filters["breakable"] = breakable
templates.env.globals.update(
    asset=ASSET_URLS,
    difficulties=list(Difficulty),
)


def kept_fragment(name: str, **values: str | int) -> Markup:
    """The template `name` rendered with `values` alone, kept for those values: for a part
    a page repeats row after row that changes only with the content (an exercise's row in
    the list: rendering its 61 rows each time was most of the list's CPU)."""
    return _rendered(name, tuple(values.items()))  # a call site names them in one order


@lru_cache(maxsize=4096)  # an exercise's row in each of its statuses: a few hundred
def _rendered(name: str, values: tuple[tuple[str, str | int], ...]) -> Markup:
    return Markup(templates.env.get_template(name).render(dict(values)))


def is_htmx(request: Request) -> bool:
    """A request htmx made to swap part of the page: not a boosted navigation, and not the
    whole-page fetch htmx makes to restore history (Back) when its cache is off."""
    headers = request.headers
    return (
        headers.get("HX-Request") == "true"
        and "HX-Boosted" not in headers
        and "HX-History-Restore-Request" not in headers
    )


def render(
    request: Request,
    page: str,
    context: dict[str, Any],
    *,
    fragment: str | None = None,
    status_code: int = 200,
    headers: dict[str, str] | None = None,
) -> HTMLResponse:
    """The full `page`, or just `fragment` when htmx asks; caches keep the two apart. Every
    template also gets, as variables rather than calls (a Jinja call costs twice a look-up,
    and the frame made a dozen): `csrf`, the request's CSRF token as its forms send it
    (cookies.csrf_token); `me`, who asks (None on a page that did not resolve it);
    `review_due`, the navigation's due count; `page_path` and `page_query`, where the page
    is (the navigation marks its section)."""
    partial = bool(fragment) and is_htmx(request)
    name = fragment if partial and fragment else page
    scope = request.scope
    frame = {
        "htmx": partial,
        "csrf": csrf_token(request),
        "me": viewer(request),
        "review_due": due_for_review(request),
        "page_path": scope["path"],
        "page_query": scope["query_string"].decode("latin-1"),
    }
    response = templates.TemplateResponse(
        request, name, {**context, **frame}, status_code=status_code
    )
    response.headers["Vary"] = "HX-Request"
    response.headers.update(headers or {})
    return response


def compile_all() -> None:
    """Compile every template now (at start-up, before the garbage collector is frozen),
    rather than on each one's first request."""
    for name in templates.env.list_templates(extensions=["html"]):
        templates.get_template(name)
