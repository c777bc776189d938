"""On a real PostgreSQL server, the migrations build exactly the schema the models describe,
and can be undone."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect
from sqlalchemy.engine import Engine
from sqlmodel import SQLModel

import app.models  # noqa: F401
from app import migrate
from app.migrate import include_object

pytest_plugins = ["tests.support.postgres"]  # the server and the fresh database per test


def test_models_and_migrations_agree(postgres_engine: Engine) -> None:
    migrate.upgrade(postgres_engine)
    with postgres_engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"include_object": include_object, "compare_type": True}
        )
        diff = compare_metadata(context, SQLModel.metadata)
    assert diff == []


def test_downgrade_to_base_and_up_again(postgres_engine: Engine) -> None:
    migrate.upgrade(postgres_engine)
    migrate.downgrade(postgres_engine, "base")
    assert set(inspect(postgres_engine).get_table_names()) <= {"alembic_version"}
    migrate.upgrade(postgres_engine)
    assert set(inspect(postgres_engine).get_table_names()) >= set(SQLModel.metadata.tables)
