"""Static files compressed once each: a large one asked for before the start-up thread has
compressed it goes out as it is at once (the first visit of /docs waited seconds on
Swagger UI's script), and compressed once it is ready."""

from __future__ import annotations

import os
import random
from pathlib import Path

from starlette.responses import FileResponse, Response

from app.web.static import SENT_AS_IS_UNTIL_READY, _compressed, precompress
from tests.support.aio import run_async


def answer(path: Path) -> Response | None:
    response = FileResponse(path, stat_result=os.stat(path))
    scope = {"type": "http", "method": "GET", "headers": [(b"accept-encoding", b"br, gzip")]}
    return run_async(_compressed(response, scope))


def test_a_large_file_goes_as_it_is_until_compressed_then_compressed(tmp_path: Path) -> None:
    words = [f"word{n}" for n in range(500)]
    rng = random.Random(0)
    text = " ".join(rng.choice(words) for _ in range(SENT_AS_IS_UNTIL_READY // 5))
    large = tmp_path / "bundle.js"
    large.write_text(text)
    assert large.stat().st_size >= SENT_AS_IS_UNTIL_READY
    assert answer(large) is None  # not compressed yet: sent as it is, nobody waits
    assert precompress(tmp_path) == 1
    ready = answer(large)
    assert ready is not None and ready.headers["Content-Encoding"] == "br"
    assert len(ready.body) < large.stat().st_size // 3


def test_a_small_file_is_compressed_on_its_first_request(tmp_path: Path) -> None:
    small = tmp_path / "page.css"
    small.write_text("body { color: black; }\n" * 200)
    first = answer(small)
    assert first is not None and first.headers["Content-Encoding"] == "br"
