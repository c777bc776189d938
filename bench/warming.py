"""Page and run latency while the sandbox warms its compile cache, against the same server
with warming paused (quiet), in alternating windows, printed side by side as a table; for
this checkout and (with --baseline DIR) another, in one run.

    sudo .venv/bin/python bench/warming.py [--baseline ../old-checkout] [--rounds 6]

Each server is `backprop serve` over a private data folder (bench/served.py), beside a
sandbox worker of the same checkout on a private state folder that warms the compile cache
once ready, as a real start does.

While the health check says `warming`, windows alternate, quiet-warming-warming-quiet and so
on: in a quiet window the warming run's cgroup is frozen (the cgroup freezer), in a warming
window it runs. In each window a few clients load a guest's item page back to back for
`--seconds`, then one trivial run goes (POST /api/runs, then its event stream until the
result). Alternating within one stretch of time keeps the machine's other load from
deciding the comparison. A warming window in which warming had ended is not counted. The
ratio column is warming over quiet: at most 1.20 is the goal.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from served import ROOT, served

sys.path.insert(0, str(ROOT))

from app.serve import web_user
from sandbox import cgroups

ITEM = "/items/batch-normalization"
TRIVIAL = "print('hi')"
WARM_TIMEOUT_SECONDS = 1200
SETTINGS = {
    "SANDBOX_AUTOSTART": "false",  # the bench's own worker (own_worker)
    # One bench client stands for many learners: the per-person caps are not measured here.
    "RUNS_PER_MINUTE": "100000",
    "RUNS_PER_MINUTE_PER_CLIENT": "100000",
    "CONCURRENT_RUNS": "1000",
    "CONCURRENT_RUNS_PER_CLIENT": "1000",
}


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def get_json(url: str, body: dict[str, Any] | None = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)


def cache_state(base: str) -> str:
    """What the health check says of the CPU backend's compile cache."""
    state: str = get_json(f"{base}/api/health")["sandbox"]["compile_cache"].get("cpu", "")
    return state


def warming(base: str) -> bool:
    return cache_state(base).startswith("warming")


def page_latencies(base: str, clients: int, seconds: float) -> list[float]:
    """Milliseconds of each GET of the item page, `clients` of them back to back."""
    times: list[float] = []
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def client() -> None:
        mine = []
        while time.monotonic() < end:
            started = time.perf_counter()
            with urllib.request.urlopen(f"{base}{ITEM}", timeout=30) as response:
                response.read()
            mine.append((time.perf_counter() - started) * 1000)
        with lock:
            times.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return times


def run_latencies(base: str, count: int) -> list[float]:
    """Milliseconds from posting a trivial run to its stream's result, one run at a time."""
    times = []
    for _ in range(count):
        started = time.perf_counter()
        run = get_json(f"{base}/api/runs", {"code": TRIVIAL, "backend": "cpu"})
        events = f"{base}/api/runs/{run['id']}/events?token={run['token']}"
        with urllib.request.urlopen(events, timeout=120) as stream:
            text = stream.read().decode()
        if '"verdict": "ok"' not in text:
            sys.exit(f"a trivial run did not end ok: {text[-500:]}")
        times.append((time.perf_counter() - started) * 1000)
    return times


@contextmanager
def paused(state_dir: Path) -> Iterator[None]:
    """The worker's runs now (the warming one: trivial runs go one at a time, between
    windows) frozen, and thawed at the end."""
    frozen = cgroups.tree(cgroups.state_key(state_dir)).leftovers()
    for cgroup in frozen:
        if not cgroup.freeze(True):
            sys.exit("this host's cgroups have no freezer: warming cannot be paused")
    try:
        yield
    finally:
        for cgroup in frozen:
            cgroup.freeze(False)


def window(base: str, clients: int, seconds: float) -> dict[str, list[float]]:
    return {"pages": page_latencies(base, clients, seconds), "runs": run_latencies(base, 1)}


@contextmanager
def own_worker(root: Path) -> Iterator[tuple[Path, Path]]:
    """The sandbox worker of the checkout `root`, on a private state folder, warming that
    checkout's labs once ready; its socket (which the web server's user may open) and its
    state folder."""
    folder = Path(tempfile.mkdtemp(prefix="backprop-bench-warming-"))
    folder.chmod(0o755)
    socket_path, state_dir = folder / "worker.sock", folder / "state"
    command = [
        sys.executable, "-m", "sandbox", "--socket", str(socket_path),
        "--state-dir", str(state_dir), "--client-uid", str(web_user("backprop").pw_uid),
        "--warm-labs", str(root / "content" / "labs"),
    ]  # fmt: skip
    with open(folder / "worker.log", "wb") as log:
        worker = subprocess.Popen(command, cwd=root, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield socket_path, state_dir
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
        shutil.rmtree(folder, ignore_errors=True)


def measure(root: Path, port: int, clients: int, seconds: float, rounds: int) -> dict[str, Any]:
    """Quiet and warming windows, alternating, on one server from `root`."""
    found: dict[str, Any] = {
        "quiet": {"pages": [], "runs": []},
        "warming": {"pages": [], "runs": []},
        "windows": {"quiet": 0, "warming": 0},
    }
    with (
        own_worker(root) as (socket_path, state_dir),
        served(
            port,
            {**SETTINGS, "SANDBOX_SOCKET": str(socket_path)},
            lambda health: health["sandbox"]["available"],
            root,
        ) as base,
    ):
        deadline = time.monotonic() + 120
        while not warming(base):  # warming starts once the worker is ready
            if time.monotonic() > deadline:
                sys.exit(f"the compile cache did not start warming: {cache_state(base)}")
            time.sleep(0.5)
        # Quiet first and last in each pair of rounds: Q W W Q Q W W Q...
        order = [kind for r in range(rounds) for kind in (("quiet", "warming")[:: 1 - 2 * (r % 2)])]
        for kind in order:
            if kind == "quiet":
                with paused(state_dir):
                    measured = window(base, clients, seconds)
            else:
                measured = window(base, clients, seconds)
                if not warming(base):
                    print(f"  {root.name}: warming ended; window not counted", file=sys.stderr)
                    break
            for key, values in measured.items():
                found[kind][key].extend(values)
            found["windows"][kind] += 1
        print(f"  {root.name}: {cache_state(base)}", file=sys.stderr)
    return found


def rows(result: dict[str, dict[str, Any]]) -> list[tuple[str, float, float]]:
    quiet, during = result["quiet"], result["warming"]
    found = []
    for label, key, statistic in (
        ("item page p50 (ms)", "pages", lambda v: statistics.median(v)),
        ("item page p99 (ms)", "pages", lambda v: pct(v, 99)),
        ("trivial run p50 (ms)", "runs", lambda v: statistics.median(v)),
        ("trivial run max (ms)", "runs", max),
    ):
        show: Callable[[list[float]], float] = statistic
        found.append((label, show(quiet[key]), show(during[key])))
    found.append(("item pages served", len(quiet["pages"]), len(during["pages"])))
    found.append(("windows counted", result["windows"]["quiet"], result["windows"]["warming"]))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", type=Path, help="another checkout to measure first")
    parser.add_argument("--port", type=int, default=8773)
    parser.add_argument("--clients", type=int, default=2, help="item-page clients at once")
    parser.add_argument("--seconds", type=float, default=5.0, help="of page loads per window")
    parser.add_argument("--rounds", type=int, default=8, help="pairs of windows")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root: `backprop serve` needs it to isolate code")
    roots = [args.baseline.resolve()] if args.baseline else []
    roots.append(ROOT)
    results = {
        root: measure(root, args.port, args.clients, args.seconds, args.rounds) for root in roots
    }
    print(
        f"\n{platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
        f"{args.rounds} pairs of windows, each {args.clients} page clients for "
        f"{args.seconds:.0f} s then one trivial run\n"
    )
    header = f"{'':24}"
    for root in roots:
        name = "baseline" if root != ROOT else "this checkout"
        header += f" | {name + ': quiet':>22} {'warming':>9} {'ratio':>6}"
    print(header)
    print("-" * len(header))
    table = {root: rows(results[root]) for root in roots}
    for index, (label, _, _) in enumerate(table[roots[0]]):
        line = f"{label:24}"
        for root in roots:
            _, quiet, during = table[root][index]
            ratio = during / quiet if quiet else float("nan")
            line += f" | {quiet:>22.1f} {during:>9.1f} {ratio:>6.2f}"
        print(line)


if __name__ == "__main__":
    main()
