"""Static files with cache headers (versioned addresses, ?v=hash, never change content) and
compression: each compressible file is compressed once, with brotli and with gzip at their
highest levels, in a worker thread, and kept in memory (keyed by its path, size and
modification time, so an edited file is compressed again). `precompress` does the files pages
load at start-up; a browser gets brotli when it accepts it, else gzip, else the file as it is.
A large file not compressed yet goes out as it is at once, while a thread compresses it for
the requests after (brotli's best level takes seconds on Swagger UI's 1.7 MB script)."""

from __future__ import annotations

import contextlib
import gzip
import os
import threading
from collections.abc import Callable
from pathlib import Path

import brotli  # type: ignore[import-untyped]
from anyio import to_thread
from starlette.datastructures import Headers
from starlette.responses import FileResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

COMPRESSIBLE = {".css", ".js", ".svg", ".json", ".html", ".txt", ".map", ".md"}
MIN_COMPRESSED_SIZE = 500  # smaller files gain less than the header costs
# From this size on, compressing takes long enough (0.5 s for Swagger UI's 188 KB stylesheet,
# 5 s for its script, on an idle 2-core machine) that the first request must not wait for it:
# it gets the file as it is, and a thread compresses it for the next ones.
COMPRESSED_BESIDE_FROM = 128 * 1024

Key = tuple[str, int, int]  # path, size, modification time
# The compressed bodies by path, with the size and modification time they were made from
# (one entry a file: the static files are a fixed set).
_READY: dict[str, tuple[Key, dict[str, bytes]]] = {}
# Set when a file's compression in a thread ends, by key: one thread a file, however many
# requests ask for it meanwhile.
_UNDER_WAY: dict[Key, threading.Event] = {}
_LOCK = threading.Lock()


class VersionedStaticFiles(StaticFiles):
    """Lets browsers keep an asset for a year when its address carries a content hash, and
    sends it compressed to those that accept it."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if response.status_code == 200:
            versioned = b"v=" in scope.get("query_string", b"")
            response.headers["Cache-Control"] = (
                "public, max-age=31536000, immutable" if versioned else "public, max-age=300"
            )
            if isinstance(response, FileResponse):
                return await _compressed(response, scope) or response
        return response


# Compressed on first request instead: /docs alone loads them, and the bundle took 2.1 of the
# 2.9 s of CPU that compressing everything at start-up cost (measured on the 2-core machine).
NOT_AT_START = ("vendor/swagger-ui",)


def _in_the_background(work: Callable[[], object]) -> None:
    """Run `work` in a daemon thread at the lowest CPU priority: on Linux a thread has its
    own nice value, so requests (and the API's schema a visitor of /docs waits for) come
    first on a busy machine, and compressing waits for idle CPU."""

    def lowly() -> None:
        # Not on Linux: the same work, at normal priority.
        with contextlib.suppress(AttributeError, OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        work()

    threading.Thread(target=lowly, daemon=True).start()


def start_precompressing(folder: Path) -> None:
    """Compress the files pages load in a background thread (started with the app)."""
    _in_the_background(lambda: precompress(folder))


def precompress(folder: Path) -> int:
    """Compress the files pages load (run in a thread at start-up); how many."""
    count = 0
    for path in folder.rglob("*"):
        if path.relative_to(folder).as_posix().startswith(NOT_AT_START):
            continue
        if path.is_file() and _compressible(path):
            stat = path.stat()
            _encoded(str(path), stat.st_size, stat.st_mtime_ns)
            count += 1
    return count


async def _compressed(response: FileResponse, scope: Scope) -> Response | None:
    """The compressed answer for `response`, or None when it should go as it is."""
    path, stat = Path(os.fspath(response.path)), response.stat_result
    if stat is None or not _compressible(path) or stat.st_size < MIN_COMPRESSED_SIZE:
        return None
    response.headers["Vary"] = "Accept-Encoding"
    accepted = Headers(scope=scope).get("accept-encoding", "").lower()
    encoding = "br" if "br" in accepted else "gzip" if "gzip" in accepted else None
    if encoding is None or scope.get("method") == "HEAD":
        return None
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    bodies = _ready(key)
    if bodies is None:
        if stat.st_size >= COMPRESSED_BESIDE_FROM:
            compress_beside(key)
            return None  # as it is, now, rather than seconds later
        bodies = await to_thread.run_sync(_encoded, *key)
    headers = {k: v for k, v in response.headers.items() if k.lower() != "content-length"}
    headers["Content-Encoding"] = encoding
    return Response(bodies[encoding], headers=headers)


def _compressible(path: Path) -> bool:
    return path.suffix.lower() in COMPRESSIBLE


def compress_beside(key: Key) -> threading.Event:
    """Compress the file in a thread of its own unless one is already at it; the event is set
    when its compressed bodies are ready."""
    with _LOCK:
        done = _UNDER_WAY.get(key)
        if done is None:
            done = _UNDER_WAY[key] = threading.Event()
            _in_the_background(lambda: _compress_then_set(key, done))
    return done


def _compress_then_set(key: Key, done: threading.Event) -> None:
    try:
        _encoded(*key)
    finally:
        # Set even when the file vanished meanwhile: the next request tries again.
        with _LOCK:
            del _UNDER_WAY[key]
        done.set()


def _ready(key: Key) -> dict[str, bytes] | None:
    found = _READY.get(key[0])
    return found[1] if found is not None and found[0] == key else None


def _encoded(path: str, size: int, mtime_ns: int) -> dict[str, bytes]:
    """The file compressed each way, kept; `size` and `mtime_ns` are part of the key only."""
    key = (path, size, mtime_ns)
    bodies = _ready(key)
    if bodies is None:
        data = Path(path).read_bytes()
        bodies = {
            "br": brotli.compress(data, quality=11),
            "gzip": gzip.compress(data, compresslevel=9, mtime=0),
        }
        _READY[path] = (key, bodies)
    return bodies
