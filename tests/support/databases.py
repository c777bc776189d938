"""The test session's databases, on the engine DATABASE_URL names: SQLite files by default,
or databases on a PostgreSQL server when it is `postgresql+psycopg://...`. One template is
migrated and imported once; every test gets its own copy of it."""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import URL, Engine, make_url

from app import migrate
from app.db import make_engine
from app.importer import import_content
from tests.support.paths import CONTENT_DIR

_numbers = itertools.count(1)


def is_postgres(url: str) -> bool:
    return make_url(url).get_backend_name() == "postgresql"


def admin_engine(url: URL | str) -> Engine:
    """An engine on the server's `postgres` database that can create and drop databases."""
    return create_engine(make_url(url).set(database="postgres"), isolation_level="AUTOCOMMIT")


def on_postgres() -> bool:
    """Whether this session's databases live on PostgreSQL (DATABASE_URL says so)."""
    return is_postgres(os.environ.get("DATABASE_URL") or "sqlite://")


skip_on_postgres = pytest.mark.skipif(on_postgres(), reason="set DATABASE_URL to a SQLite URL")


def build_template(folder: Path) -> str:
    """A migrated database holding all content: its URL. On PostgreSQL, a database named for
    this process on DATABASE_URL's server; otherwise a SQLite file in `folder`."""
    if on_postgres():
        server = make_url(os.environ["DATABASE_URL"])
        url = server.set(database=f"backprop_{os.getpid()}_template")
        with admin_engine(server).connect() as conn:
            conn.execute(text(f"DROP DATABASE IF EXISTS {url.database} WITH (FORCE)"))
            conn.execute(text(f"CREATE DATABASE {url.database}"))
        template = url.render_as_string(hide_password=False)
    else:
        template = f"sqlite:///{folder / 'backprop.db'}"
    engine = make_engine(template)
    migrate.upgrade(engine)
    import_content(engine, CONTENT_DIR)
    if engine.dialect.name == "sqlite":
        with engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    # A PostgreSQL template is copied only while nobody is connected to it.
    engine.dispose()
    return template


@contextmanager
def copy_of(template: str, folder: Path) -> Iterator[str]:
    """A private copy of the template database while the block runs: its URL."""
    if not is_postgres(template):
        path = folder / "backprop.db"
        shutil.copy(str(make_url(template).database), path)
        yield f"sqlite:///{path}"
        return
    # About 120 ms for the 10 MB template on the 2-core machine, with either of PostgreSQL's
    # copy strategies (WAL_LOG, the default, or FILE_COPY); the drop takes about 8 ms.
    with _postgres_database(template, f"TEMPLATE {make_url(template).database}") as url:
        yield url


@contextmanager
def empty(folder: Path) -> Iterator[str]:
    """A new database with nothing in it while the block runs: its URL."""
    if not on_postgres():
        yield f"sqlite:///{folder / 'empty.db'}"
        return
    with _postgres_database(os.environ["DATABASE_URL"], "") as url:
        yield url


@contextmanager
def _postgres_database(server_url: str, options: str) -> Iterator[str]:
    """A database created on the server with `options`, dropped after the block."""
    server = make_url(server_url)
    url = server.set(database=f"backprop_{os.getpid()}_{next(_numbers)}")
    admin = admin_engine(server)
    try:
        with admin.connect() as conn:
            conn.execute(text(f"CREATE DATABASE {url.database} {options}"))
        yield url.render_as_string(hide_password=False)
        with admin.connect() as conn:
            conn.execute(text(f"DROP DATABASE {url.database} WITH (FORCE)"))
    finally:
        admin.dispose()
