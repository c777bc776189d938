"""A throwaway PostgreSQL server for the test session, from Debian's postgresql package."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import URL, Engine, make_url

from app.db import make_engine

BIN_DIRS = Path("/usr/lib/postgresql")
SETUP_HINT = "run `.ci/setup --dev`, which installs Debian's postgresql package"
DATABASE = "backprop_test"


def server_bin_dir() -> Path:
    """The newest installed server's bin folder; fails the test when there is none."""
    found = [d for d in BIN_DIRS.glob("*/bin") if (d / "initdb").is_file()]
    if not found:
        pytest.fail(f"no PostgreSQL server in {BIN_DIRS}/*/bin: {SETUP_HINT}", pytrace=False)
    return max(found, key=lambda d: [int(n) for n in re.findall(r"\d+", d.parent.name)])


def as_server_user(base: Path) -> list[str]:
    """The command prefix that runs a program as the folder's owner: initdb and postgres
    refuse to run as root."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        pytest.fail(f"running as root and there is no `postgres` user: {SETUP_HINT}", pytrace=False)
    shutil.chown(base, "postgres", "postgres")
    return ["runuser", "-u", "postgres", "--"]


def free_port() -> int:
    """A loopback TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def admin_engine(url: URL) -> Engine:
    """An engine on the server's `postgres` database that can create and drop databases."""
    return create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")


def run(command: list[str], base: Path) -> None:
    """Run a server tool; on failure, fail the test with its output and the server log."""
    done = subprocess.run(command, cwd=base, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        log = base / "server.log"
        pytest.fail(
            f"{' '.join(command)} exited with {done.returncode}:\n{done.stdout}{done.stderr}"
            + (f"\nserver log:\n{log.read_text()}" if log.exists() else ""),
            pytrace=False,
        )


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """The URL of an empty `backprop_test` database on a private server, up for the session."""
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
            )
        pg_ctl = [*prefix, str(bin_dir / "pg_ctl"), f"--pgdata={data}"]
        run([*pg_ctl, f"--log={base / 'server.log'}", "--wait", "start"], base)
        try:
            url = make_url(f"postgresql+psycopg://postgres@127.0.0.1:{port}/{DATABASE}")
            admin = admin_engine(url)
            with admin.connect() as conn:
                conn.execute(text(f"CREATE DATABASE {DATABASE}"))
            admin.dispose()
            yield url.render_as_string(hide_password=False)
        finally:
            run([*pg_ctl, "--mode=immediate", "--wait", "stop"], base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


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
