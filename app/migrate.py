"""Run the Alembic migrations from inside the app (at start-up, in tests, from the CLI)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy.engine import Engine

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
# Tables the models do not describe on purpose: SQLite's full-text index and its shadow tables.
UNMODELLED_PREFIXES = ("item_search",)


def include_object(
    obj: object, name: str | None, type_: str, reflected: bool, compare_to: object
) -> bool:
    """Leave the full-text index out of autogenerate and of the models/migrations check."""
    return not (type_ == "table" and (name or "").startswith(UNMODELLED_PREFIXES))


def alembic_config(engine: Engine | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if engine is not None:
        config.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False))
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to `revision` (the newest by default)."""
    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def downgrade(engine: Engine, revision: str) -> None:
    """Undo migrations down to `revision` ("base" undoes them all)."""
    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, revision)
