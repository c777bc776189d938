"""A throwaway PostgreSQL server from Debian's postgresql package: for one test session (the
`postgres_url` fixture), or around a whole command (`.ci/postgres pytest ...`, which runs the
command with DATABASE_URL pointing at a fresh server and stops the server afterwards)."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import URL, Engine, make_url

from app.db import make_engine
from tests.support.databases import admin_engine, is_postgres
from tests.support.processes import free_port

BIN_DIRS = Path("/usr/lib/postgresql")
SETUP_HINT = "run `.ci/setup --dev`, which installs Debian's postgresql package"
DATABASE = "backprop_test"


class ServerError(RuntimeError):
    """The server could not be set up; the message says why and what to do."""


def server_bin_dir() -> Path:
    """The newest installed server's bin folder."""
    found = [d for d in BIN_DIRS.glob("*/bin") if (d / "initdb").is_file()]
    if not found:
        raise ServerError(f"no PostgreSQL server in {BIN_DIRS}/*/bin: {SETUP_HINT}")
    return max(found, key=lambda d: [int(n) for n in re.findall(r"\d+", d.parent.name)])


def as_server_user(base: Path) -> list[str]:
    """The command prefix that runs a program as the folder's owner: initdb and postgres
    refuse to run as root."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise ServerError(
            f"running as root and there is no `postgres` user: {SETUP_HINT}"
        ) from None
    shutil.chown(base, "postgres", "postgres")
    return ["runuser", "-u", "postgres", "--"]


def run(command: list[str], base: Path) -> None:
    """Run a server tool; on failure, ServerError with its output and the server log."""
    done = subprocess.run(command, cwd=base, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        log = base / "server.log"
        raise ServerError(
            f"{' '.join(command)} exited with {done.returncode}:\n{done.stdout}{done.stderr}"
            + (f"\nserver log:\n{log.read_text()}" if log.exists() else "")
        )


@contextmanager
def throwaway_server() -> Iterator[URL]:
    """A private server on a free loopback port, up while the block runs: the URL of its
    `postgres` database (trust authentication; everything in it is gone afterwards)."""
    bin_dir = server_bin_dir()
    # Not under pytest's tmp_path: that is private to the user running pytest, and as root the
    # server runs as `postgres`, which must be able to reach its folder.
    base = Path(tempfile.mkdtemp(prefix="backprop-pg-"))
    data = base / "data"
    try:
        prefix = as_server_user(base)
        run(
            [
                *prefix,
                str(bin_dir / "initdb"),
                f"--pgdata={data}",
                "--username=postgres",
                "--auth=trust",  # loopback only, and nothing in it outlives the session
                "--encoding=UTF8",
                "--no-locale",
                "--no-sync",
            ],
            base,
        )
        port = free_port()
        with (data / "postgresql.conf").open("a") as conf:
            conf.write(
                f"listen_addresses = '127.0.0.1'\nport = {port}\n"
                # Debian's default socket folder may not exist or belong to another server.
                "unix_socket_directories = ''\n"
                # Durability buys nothing for a database thrown away after the tests.
                "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
                # A database per test, each app with its own pool: room for several at once.
                "max_connections = 300\n"
            )
        pg_ctl = [*prefix, str(bin_dir / "pg_ctl"), f"--pgdata={data}"]
        run([*pg_ctl, f"--log={base / 'server.log'}", "--wait", "start"], base)
        try:
            yield make_url(f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres")
        finally:
            run([*pg_ctl, "--mode=immediate", "--wait", "stop"], base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


@contextmanager
def server_for_session() -> Iterator[URL]:
    """The server DATABASE_URL names when it is a PostgreSQL one (`.ci/postgres` started it),
    else a throwaway server of this session's own."""
    given = os.environ.get("DATABASE_URL", "")
    if given and is_postgres(given):
        yield make_url(given)
        return
    with throwaway_server() as url:
        yield url


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """The URL of an empty `backprop_test` database on a PostgreSQL server, up for the session."""
    try:
        with server_for_session() as server:
            url = server.set(database=f"{DATABASE}_{os.getpid()}")
            with admin_engine(url).connect() as conn:
                conn.execute(text(f"CREATE DATABASE {url.database}"))
            yield url.render_as_string(hide_password=False)
    except ServerError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture
def postgres_engine(postgres_url: str) -> Iterator[Engine]:
    """An engine on the session's `backprop_test` database, dropped and created empty again
    for this test so that no test sees another's tables."""
    url = make_url(postgres_url)
    admin = admin_engine(url)
    with admin.connect() as conn:
        conn.execute(text(f"DROP DATABASE IF EXISTS {url.database} WITH (FORCE)"))
        conn.execute(text(f"CREATE DATABASE {url.database}"))
    admin.dispose()
    engine = make_engine(postgres_url)
    yield engine
    engine.dispose()


def main(argv: list[str]) -> int:
    """Run the command in argv with DATABASE_URL on a throwaway server; its exit status."""
    if not argv:
        print("usage: python -m tests.support.postgres COMMAND [ARGUMENT ...]", file=sys.stderr)
        return 2
    try:
        with throwaway_server() as server:
            # A database of its own: what the command creates stays out of `postgres`.
            url = server.set(database="backprop")
            with admin_engine(server).connect() as conn:
                conn.execute(text("CREATE DATABASE backprop"))
            env = {**os.environ, "DATABASE_URL": url.render_as_string(hide_password=False)}
            print(f"==> PostgreSQL at {url.host}:{url.port}", flush=True)
            return subprocess.run(argv, env=env, check=False).returncode
    except ServerError as exc:
        print(exc, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
