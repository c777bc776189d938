"""Static files with cache headers (versioned addresses, ?v=hash, never change content) and
compression: each compressible file is compressed once, with brotli and with gzip at their
highest levels, in a worker thread, and kept in memory (keyed by its path, size and
modification time, so an edited file is compressed again). `precompress` does the files pages
load at start-up; a browser gets brotli when it accepts it, else gzip, else the file as it is."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import brotli  # type: ignore[import-untyped]
from anyio import to_thread
from starlette.datastructures import Headers
from starlette.responses import FileResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

COMPRESSIBLE = {".css", ".js", ".svg", ".json", ".html", ".txt", ".map", ".md"}
MIN_COMPRESSED_SIZE = 500  # smaller files gain less than the header costs
# A file this large (Swagger UI's script) takes seconds to compress at the best level: asked
# for before the start-up thread has done it, it is sent as it is rather than kept waiting.
SENT_AS_IS_UNTIL_READY = 512 * 1024
# Compressed bodies by (path, size, modification time): the static files are a fixed set.
_READY: dict[tuple[str, int, int], dict[str, bytes]] = {}


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


# Compressed last: /docs alone loads them, and the bundle takes most of the CPU that
# compressing everything costs (2.1 of 2.9 s on the 2-core machine). Left to the first
# request, it made the first visit of /docs wait seconds.
LAST = ("vendor/swagger-ui",)


def precompress(folder: Path) -> int:
    """Compress every compressible file (run in a thread at start-up), the pages' own files
    first; how many."""
    files = sorted(
        (p for p in folder.rglob("*") if p.is_file() and _compressible(p)),
        key=lambda p: p.relative_to(folder).as_posix().startswith(LAST),
    )
    for path in files:
        stat = path.stat()
        _encoded(str(path), stat.st_size, stat.st_mtime_ns)
    return len(files)


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
    if stat.st_size >= SENT_AS_IS_UNTIL_READY and key not in _READY:
        return None  # the start-up thread is compressing it; meanwhile it goes as it is
    bodies = await to_thread.run_sync(_encoded, *key)
    headers = {k: v for k, v in response.headers.items() if k.lower() != "content-length"}
    headers["Content-Encoding"] = encoding
    return Response(bodies[encoding], headers=headers)


def _compressible(path: Path) -> bool:
    return path.suffix.lower() in COMPRESSIBLE


def _encoded(path: str, size: int, mtime_ns: int) -> dict[str, bytes]:
    """The file compressed each way, kept; `size` and `mtime_ns` are part of the key only
    (an edited file is compressed again)."""
    key = (path, size, mtime_ns)
    found = _READY.get(key)
    if found is None:
        data = Path(path).read_bytes()
        found = {
            "br": brotli.compress(data, quality=11),
            "gzip": gzip.compress(data, compresslevel=9, mtime=0),
        }
        _READY[key] = found
    return found
