"""`backprop` command line: serve the app, import content, migrate the database."""

from __future__ import annotations

import argparse
import logging
import sys

from sqlalchemy.engine import Engine
from sqlmodel import Session

from app import migrate
from app.db import make_engine
from app.domain import DomainError
from app.importer import ContentError, import_content
from app.serve import serve
from app.services import accounts
from app.settings import Settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="backprop", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    serving = sub.add_parser("serve", help="run the web app (HOST, PORT from the environment)")
    serving.add_argument("--reload", action="store_true", help="restart when code changes")
    serving.add_argument("--workers", type=int, default=1, help="worker processes")
    sub.add_parser("import-content", help="import changed content files into the database")
    sub.add_parser("migrate", help="bring the database schema up to date")
    admin = sub.add_parser("admin", help="grant or take back the authoring pages")
    admin.add_argument("action", choices=["grant", "revoke"])
    admin.add_argument("username")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    settings = Settings()

    if args.command == "serve":
        serve(settings, reload=args.reload, workers=args.workers)
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
    if args.command == "admin":
        return _set_admin(engine, args.username, admin=args.action == "grant")
    return 0


def _set_admin(engine: Engine, username: str, *, admin: bool) -> int:
    with Session(engine) as session:
        try:
            user = accounts.set_admin(session, username=username, admin=admin)
        except DomainError as exc:
            print(exc.message, file=sys.stderr)
            return 1
        session.commit()
        print(f"{user.username} {'is now' if admin else 'is no longer'} an admin.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
