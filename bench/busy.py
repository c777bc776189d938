"""A busy machine for the benches: busy loops at the priority of everything else, as the
other work of a shared host would be."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

LOOP = "while True:\n    pass\n"


@contextmanager
def hog(processes: int) -> Iterator[None]:
    """`processes` busy loops for as long as the block runs (none for 0)."""
    loops = [subprocess.Popen([sys.executable, "-c", LOOP]) for _ in range(processes)]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
