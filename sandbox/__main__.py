"""`python -m sandbox`: run the sandbox worker."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
from pathlib import Path

from sandbox import cgroups
from sandbox.server import serve
from sandbox.state_dir import default_state_dir
from sandbox.worker import Worker


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m sandbox", description=__doc__)
    parser.add_argument("--socket", type=Path, required=True, help="Unix socket to listen on")
    parser.add_argument(
        "--cpu-slots",
        type=int,
        default=max(1, (os.cpu_count() or 2)),
        help="CPU runs at once (default: one per core)",
    )
    parser.add_argument(
        "--max-queue",
        type=int,
        default=16,
        help="runs that may wait per backend before new ones are refused",
    )
    parser.add_argument("--state-dir", type=Path, default=default_state_dir())
    parser.add_argument(
        "--client-uid",
        type=int,
        default=None,
        help="the user (the web server's) that may connect to the socket besides root: "
        "the socket is made its own (mode 0600)",
    )
    parser.add_argument(
        "--client-gid",
        type=int,
        default=None,
        help="a group whose members may connect too (the socket's group; mode 0660)",
    )
    parser.add_argument(
        "--parent-pid",
        type=int,
        default=None,
        help="stop (as on SIGTERM) once this process, our parent, has exited; for a parent "
        "that drops root after starting the worker, whose parent-death signal cannot reach it",
    )
    parser.add_argument(
        "--warm-labs",
        type=Path,
        default=None,
        help="a folder of lab pages (content/labs): once ready, compile their samples into "
        "the compile cache every run starts from, then the other decks' samples that call "
        "torch.compile when the folder lies in a content folder (see sandbox/compile_cache.py)",
    )
    parser.add_argument(
        "--cgroup",
        type=Path,
        default=None,
        help="cgroup v2: move into this folder of the unified hierarchy first and give runs "
        "cgroups under it; for hosts where no service manager delegates one (it must offer "
        "the memory, pids and cpu controllers and hold no other process)",
    )
    args = parser.parse_args()
    if args.cgroup is not None:
        cgroups.enter(args.cgroup)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    worker = Worker(
        cpu_slots=args.cpu_slots,
        max_queue=args.max_queue,
        state_dir=args.state_dir,
        labs_dir=args.warm_labs,
    )
    asyncio.run(
        serve(
            args.socket,
            worker,
            client_uid=args.client_uid,
            client_gid=args.client_gid,
            parent_pid=args.parent_pid,
        )
    )


if __name__ == "__main__":
    main()
