"""What a run hoarding Unix socket buffers takes from the host, against its memory limit.

A run fills as many socketpairs as it can, both directions, in four processes, each end's
send buffer asked as large as the kernel allows, until it is stopped or has held for a few
seconds. Meanwhile this script samples the host's MemAvailable every 5 ms. Prints, per
message size and memory limit: the verdict, how far MemAvailable fell (the median of 20
readings before, less the lowest seen), how far that is past the limit, and the run's peak
as its cgroup saw it. Root is needed (its own sandbox worker, bench/worker.py).

    .venv/bin/python bench/kernel_memory.py
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from worker import run_lab, started_worker

HOARD = """
import os, socket, time
SIZE = {size}
def hoard():
    held = []
    try:
        for i in range(2000):
            kind = socket.SOCK_STREAM if i % 2 == 0 else socket.SOCK_DGRAM
            a, b = socket.socketpair(socket.AF_UNIX, kind)
            held.append((a, b))
            for end in (a, b):
                end.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 30)
                end.setblocking(False)
            for end in (a, b):
                try:
                    while True:
                        end.send(b"x" * SIZE)
                except OSError:
                    pass
    except OSError:
        pass
    time.sleep(5)
children = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        hoard()
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
"""


def mem_available_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) // 1024
    raise RuntimeError("no MemAvailable")


def measure(sock: Path, size: int, memory_mb: int) -> tuple[dict[str, object], int]:
    before = sorted(mem_available_mb() for _ in range(20))[10]
    lowest = before
    done = threading.Event()

    def watch() -> None:
        nonlocal lowest
        while not done.is_set():
            lowest = min(lowest, mem_available_mb())
            time.sleep(0.005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        _, _, result, _ = run_lab(
            sock, HOARD.format(size=size), limits={"memory_mb": memory_mb, "wall_seconds": 60}
        )
    finally:
        done.set()
        watcher.join()
    return result, before - lowest


def main() -> None:
    print("| message | limit MB | verdict | MemAvailable fell, MiB | past the limit, MiB "
          "| cgroup peak, MB | wall, s |")  # fmt: skip
    print("|---|---:|---|---:|---:|---:|---:|")
    with started_worker() as sock:
        for size, memory_mb in ((1, 512), (65000, 512), (1, 3072)):
            result, fell = measure(sock, size, memory_mb)
            print(
                f"| {size} B | {memory_mb} | {result.get('verdict')} | {fell} | "
                f"{fell - memory_mb} | {result.get('max_memory_mb')} | "
                f"{int(result.get('wall_ms') or 0) / 1000:.1f} |",
                flush=True,
            )
            time.sleep(3)  # let the host take back what the run freed


if __name__ == "__main__":
    main()
