"""Static files compressed once each. A large one (Swagger UI's script, which brotli's best
level takes seconds to compress) goes out as it is on its first request, at once, while a
thread compresses it; the requests after get it compressed. A small one is compressed on its
first request."""

from __future__ import annotations

import os
import random
import sys
import threading
from pathlib import Path

import pytest
from starlette.responses import FileResponse, Response

from app.web.static import (
    COMPRESSED_BESIDE_FROM,
    _compressed,
    _in_the_background,
    compress_beside,
)
from tests.support.aio import run_async


def answer(path: Path) -> Response | None:
    """What the static files send for `path` to a browser accepting brotli and gzip: None
    means the file as it is."""
    response = FileResponse(path, stat_result=os.stat(path))
    scope = {"type": "http", "method": "GET", "headers": [(b"accept-encoding", b"br, gzip")]}
    return run_async(_compressed(response, scope))


def key(path: Path) -> tuple[str, int, int]:
    stat = path.stat()
    return (str(path), stat.st_size, stat.st_mtime_ns)


def large_file(folder: Path) -> Path:
    words = [f"word{n}" for n in range(500)]
    rng = random.Random(0)
    path = folder / "bundle.js"
    path.write_text(" ".join(rng.choice(words) for _ in range(COMPRESSED_BESIDE_FROM // 5)))
    assert path.stat().st_size >= COMPRESSED_BESIDE_FROM
    return path


def test_a_large_file_goes_as_it_is_at_once_then_compressed(tmp_path: Path) -> None:
    large = large_file(tmp_path)
    assert answer(large) is None  # not compressed yet: sent as it is, nobody waits
    # The first request set a thread compressing it: the same event, not a second thread.
    assert compress_beside(key(large)).wait(timeout=60)
    ready = answer(large)
    assert ready is not None and ready.headers["Content-Encoding"] == "br"
    assert ready.headers["Vary"] == "Accept-Encoding"
    assert ready.headers["Content-Length"] == str(len(ready.body))  # not the file's length
    assert len(ready.body) < large.stat().st_size // 3


def test_an_edited_large_file_goes_as_it_is_again_until_compressed_anew(tmp_path: Path) -> None:
    large = large_file(tmp_path)
    assert compress_beside(key(large)).wait(timeout=60)
    assert answer(large) is not None
    large.write_text(large.read_text() + " more")
    assert answer(large) is None  # the old bodies are not the file's any more
    assert compress_beside(key(large)).wait(timeout=60)
    again = answer(large)
    assert again is not None and again.headers["Content-Encoding"] == "br"


def test_a_small_file_is_compressed_on_its_first_request(tmp_path: Path) -> None:
    small = tmp_path / "page.css"
    small.write_text("body { color: black; }\n" * 200)
    first = answer(small)
    assert first is not None and first.headers["Content-Encoding"] == "br"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own nice value")
def test_compressing_in_the_background_runs_at_the_lowest_priority() -> None:
    seen: list[int] = []
    done = threading.Event()

    def work() -> None:
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        done.set()

    _in_the_background(work)
    assert done.wait(timeout=30)
    assert seen == [19]
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) < 19  # not the caller's
