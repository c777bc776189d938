"""`backprop` command line: serve the app, import content, migrate the database."""

from __future__ import annotations

import argparse
import ctypes
import logging
import os
import signal
import subprocess
import sys

from app import migrate
from app.db import make_engine
from app.importer import ContentError, import_content
from app.settings import Settings


def start_sandbox_worker(settings: Settings) -> subprocess.Popen[bytes]:
    """The sandbox worker as a child process, listening on SANDBOX_SOCKET. It is given none
    of our environment beyond what Python needs: no secrets, no database URL."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "HOME", "TMPDIR")}
    return subprocess.Popen(
        [sys.executable, "-m", "sandbox", "--socket", str(settings.sandbox_socket)],
        env=env,
        # The worker ends with us, however we end (uvicorn re-raises SIGTERM after shutdown,
        # so a `finally` here is not enough).
        preexec_fn=_die_with_parent,
    )


def _die_with_parent() -> None:
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="backprop", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the web app (HOST, PORT from the environment)")
    serve.add_argument("--reload", action="store_true", help="restart when code changes")
    serve.add_argument("--workers", type=int, default=1, help="worker processes")
    sub.add_parser("import-content", help="import changed content files into the database")
    sub.add_parser("migrate", help="bring the database schema up to date")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    settings = Settings()

    if args.command == "serve":
        import uvicorn

        worker = start_sandbox_worker(settings) if settings.sandbox_autostart else None
        try:
            uvicorn.run(
                "app.asgi:app",
                host=settings.host,
                port=settings.port,
                reload=args.reload,
                workers=args.workers,
                proxy_headers=True,
            )
        finally:
            if worker is not None:
                worker.terminate()
                worker.wait(timeout=10)
        return 0

    engine = make_engine(settings.database_url)
    migrate.upgrade(engine)
    if args.command == "import-content":
        try:
            report = import_content(engine, settings.content_dir)
        except ContentError as exc:
            print(f"import stopped, nothing written: {exc}", file=sys.stderr)
            return 1
        print(report.summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
