"""What a run may take from the host beyond its own processes (kernel buffers), and how its
output reaches the client (coalesced events; NUL replaced) through the real worker."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from tests.support.sandbox_worker import WorkerHandle, needs_isolation

pytestmark = needs_isolation

MEMORY_MB = 256
# MemAvailable is the host's: beside what the run's cgroup is charged, it moves with what the
# cgroup is not charged (the jail's namespaces and mount structures, a few MB), what the
# worker buffers of the run's output (under 1 MiB), and whatever else this shared machine
# does during the few seconds measured. An unbounded fill would take the 2 GiB it aims for.
MARGIN_MB = 160
# Fill pipes, then Unix socket buffers (stream and datagram pairs at the largest SO_SNDBUF
# allowed), up to 2 GiB, then hold it: kernel memory, outside the Python heap.
FILL = """
import fcntl, os, socket, time
held, total = [], 0
def full():
    return total > 2 << 30
try:
    for _ in range(200):
        r, w = os.pipe()
        held.append((r, w))
        try:
            fcntl.fcntl(w, 1031, 1 << 20)
        except OSError:
            pass
        os.set_blocking(w, False)
        try:
            while not full():
                total += os.write(w, b"x" * 65536)
        except BlockingIOError:
            pass
    for kind in [socket.SOCK_STREAM, socket.SOCK_DGRAM] * 500:
        a, b = socket.socketpair(socket.AF_UNIX, kind)
        a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 30)
        b.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 30)
        a.setblocking(False)
        held.append((a, b))
        try:
            while not full():
                total += a.send(b"x" * 65000)
        except OSError:
            pass
        if full():
            break
except OSError as exc:
    print("stopped by", exc.errno)
print("holding", total >> 20, "MiB", flush=True)
time.sleep(3)
"""


def mem_available_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) // 1024
    raise AssertionError("no MemAvailable")


def test_kernel_buffers_a_run_fills_count_against_its_memory_limit(worker: WorkerHandle) -> None:
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
        result = worker.run(FILL, limits={"memory_mb": MEMORY_MB, "wall_seconds": 60})
    finally:
        done.set()
        watcher.join()
    # The cgroup is charged for the buffers: the run ends at its limit, or holds less.
    assert result["verdict"] in ("memory_limit", "ok"), (result["verdict"], result["stderr"])
    if result["verdict"] == "ok":
        assert int(result["stdout"].split("holding ")[1].split()[0]) <= MEMORY_MB
    fell = before - lowest
    assert fell <= MEMORY_MB + MARGIN_MB, f"MemAvailable fell {fell} MB"


def test_a_tight_print_loop_is_streamed_in_few_events(worker: WorkerHandle) -> None:
    # ~590 KB in 100,000 lines: within a 1 MiB output limit, so the run ends by itself.
    result = worker.run("for i in range(10**5):\n    print(i)\n", limits={"output_bytes": 1 << 20})
    assert result["verdict"] == "ok"
    events = [e for e in result["events"] if e["type"] == "stdout"]
    assert "".join(e["data"] for e in events) == result["stdout"]
    assert result["stdout"] == "".join(f"{i}\n" for i in range(10**5))
    assert len(events) <= 200, len(events)  # was one event per line read: ~10,000

    # A million lines: cut at the output limit, and still a handful of events.
    result = worker.run("for i in range(10**6):\n    print(i)\n", limits={"output_bytes": 1 << 20})
    assert result["verdict"] == "output_limit"
    events = [e for e in result["events"] if e["type"] == "stdout"]
    assert "".join(e["data"] for e in events) == result["stdout"]
    assert len(events) <= 200, len(events)


def test_nul_bytes_reach_the_client_and_the_result_as_replacement_characters(
    worker: WorkerHandle,
) -> None:
    code = (
        "import sys\n"
        "sys.stdout.write('a\\0b\\n')\n"
        "sys.stdout.flush()\n"
        "sys.stdout.buffer.write(b'c\\x00\\xff\\n')\n"
        "print('err\\0', file=sys.stderr)\n"
    )
    result = worker.run(code)
    assert result["verdict"] == "ok"
    assert result["stdout"] == "a\ufffdb\nc\ufffd\ufffd\n"
    assert result["stderr"] == "err\ufffd\n"
    for stream in ("stdout", "stderr"):
        streamed = "".join(e["data"] for e in result["events"] if e["type"] == stream)
        assert streamed == result[stream]
        assert "\x00" not in streamed
