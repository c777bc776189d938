"""Alembic environment: the app passes an open connection; the CLI passes a URL."""

from alembic import context
from sqlalchemy import create_engine
from sqlmodel import SQLModel

import app.models  # noqa: F401  (registers the tables on SQLModel.metadata)
from app.migrate import include_object

config = context.config
target_metadata = SQLModel.metadata


def run_migrations(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,  # SQLite alters tables by copying them; batch mode does that.
        include_object=include_object,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is not None:
    run_migrations(connection)
else:
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        from app.settings import Settings

        url = Settings().database_url
    engine = create_engine(url)
    with engine.begin() as conn:
        run_migrations(conn)
