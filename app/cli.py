"""`backprop` command line: serve the app, import content, migrate the database, the
operator's account tasks (admins, password resets), and reports for authors (the question
bank, the corrections, the exercises' figures)."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from collections.abc import Callable
from pathlib import Path

from sqlalchemy.engine import Engine
from sqlmodel import Session

from app import logs, migrate
from app.accounts import accounts, recovery
from app.agent import cli as agent_cli
from app.db import make_engine
from app.domain import DomainError
from app.exercises import stats as exercise_stats
from app.importer import (
    ContentError,
    bank,
    corrections,
    exercise_coverage,
    import_content,
    similar,
)
from app.importer.similar import near_duplicates
from app.serve import serve
from app.settings import Settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="backprop", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    serving = sub.add_parser("serve", help="run the web app (HOST, PORT from the environment)")
    serving.add_argument("--reload", action="store_true", help="restart when code changes")
    serving.add_argument("--workers", type=int, default=1, help="worker processes")
    sub.add_parser("import-content", help="import changed content files into the database")
    sub.add_parser("migrate", help="bring the database schema up to date")
    reviewing = sub.add_parser(
        "bank-report",
        help="review the question bank: sizes per topic and how well form cues guess the keys",
    )
    reviewing.add_argument("--content", type=Path, help="content folder (default: CONTENT_DIR)")
    reviewing.add_argument("--deck", help="only this deck's questions")
    reviewing.add_argument(
        "--items", type=bank.item_range, help="only these items of the deck, e.g. 1-19"
    )
    reviewing.add_argument(
        "--write-readme",
        action="store_true",
        help="rewrite the marked table in the content folder's README.md (whole bank only)",
    )
    listing = sub.add_parser(
        "corrections",
        help="list the corrections the items carry: what was wrong and how it was checked",
    )
    listing.add_argument("--content", type=Path, help="content folder (default: CONTENT_DIR)")
    listing.add_argument(
        "--write-readme",
        action="store_true",
        help="rewrite the marked list in the content folder's README.md",
    )
    covering = sub.add_parser(
        "exercise-coverage",
        help="list the exercises each Q&A item has, and why an item has none",
    )
    covering.add_argument("--content", type=Path, help="content folder (default: CONTENT_DIR)")
    covering.add_argument(
        "--write-readme",
        action="store_true",
        help="rewrite the marked table in the content folder's README.md",
    )
    sub.add_parser(
        "exercise-stats",
        help="each exercise's solve rate, attempts, time, hints, reveals and flaky-test flag",
    )
    admin = sub.add_parser("admin", help="grant or take back the authoring pages")
    admin.add_argument("action", choices=["grant", "revoke"])
    admin.add_argument("username")
    reset = sub.add_parser(
        "reset-password",
        help="set a new password for an account (asked for twice; every session ends)",
    )
    reset.add_argument("username")
    agent = sub.add_parser(
        "agent",
        help="run a worker host's runner agent: runs from Redis to the sandbox worker",
    )
    agent_cli.add_arguments(agent)
    args = parser.parse_args(argv)
    if args.command == "agent":  # before the settings: an agent reads none of the web app's
        logs.configure(os.environ.get("LOG_FORMAT", "text"))
        return agent_cli.start(args, agent)
    settings = Settings()
    logs.configure(settings.log_format)

    if args.command == "bank-report":
        if args.write_readme and (args.deck or args.items):
            parser.error("--write-readme reviews the whole bank: leave out --deck and --items")
        if args.items and not args.deck:
            parser.error("--items needs --deck")
        content = args.content or settings.content_dir
        return _bank_report(content, deck=args.deck, items=args.items, write=args.write_readme)
    if args.command == "corrections":
        return _corrections(args.content or settings.content_dir, write=args.write_readme)
    if args.command == "exercise-coverage":
        return _coverage(args.content or settings.content_dir, write=args.write_readme)
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
    if args.command == "reset-password":
        return _reset_password(engine, args.username)
    if args.command == "exercise-stats":
        with Session(engine) as session:
            print(_exercise_table(exercise_stats.exercise_stats(session)))
    return 0


def _corrections(content_dir: Path, *, write: bool) -> int:
    listed = corrections.list_markdown(corrections.load_corrections(content_dir))
    if write:
        try:
            _rewrite_readme(content_dir, lambda text: corrections.with_list(text, listed))
        except ContentError as exc:
            print(f"corrections list stopped: {exc}", file=sys.stderr)
            return 1
    print(listed)
    return 0


def _rewrite_readme(content_dir: Path, rewrite: Callable[[str], str]) -> None:
    """The content folder's README.md with a generated section rewritten (ContentError when
    the section's markers are missing); left untouched when nothing changed."""
    readme = content_dir / "README.md"
    text = readme.read_text(encoding="utf-8")
    updated = rewrite(text)
    if updated != text:
        readme.write_text(updated, encoding="utf-8")


def _coverage(content_dir: Path, *, write: bool) -> int:
    try:
        found = exercise_coverage.load_coverage(content_dir)
        wrong = exercise_coverage.problems(
            found, exercise_coverage.read_without(content_dir / exercise_coverage.WITHOUT_FILE)
        )
        table = exercise_coverage.table_markdown(found)
        if write:
            _rewrite_readme(content_dir, lambda text: exercise_coverage.with_table(text, table))
    except ContentError as exc:
        print(f"exercise coverage stopped: {exc}", file=sys.stderr)
        return 1
    print(table)
    for problem in wrong:
        print(f"not covered: {problem}", file=sys.stderr)
    return 1 if wrong else 0


def _bank_report(
    content_dir: Path, *, deck: str | None, items: tuple[int, int] | None, write: bool
) -> int:
    try:
        whole = bank.load_bank(content_dir)
        chosen = bank.subset(whole, deck=deck, items=items)
        table = bank.report_markdown(chosen)
        if write:
            _rewrite_readme(content_dir, lambda text: bank.with_report(text, table))
    except ContentError as exc:
        print(f"bank report stopped: {exc}", file=sys.stderr)
        return 1
    print(table)
    wheres = {q.where for q in chosen}
    pairs = [p for p in near_duplicates(whole) if {p.first, p.second} & wheres]
    if pairs:
        print(
            f"\nNear-duplicates (words {similar.THRESHOLD:.2f} in a deck, "
            f"{similar.CROSS_DECK_THRESHOLD:.2f} across decks; code {similar.CODE_THRESHOLD:.2f}):"
        )
        for pair in pairs:
            print(f"  {pair.why}  {pair.first}  ~  {pair.second}")
    return 0


def _exercise_table(stats: list[exercise_stats.ExerciseStats]) -> str:
    """One line per exercise, as /admin/exercises shows them (without the lists)."""
    lines = [
        f"{'exercise':32} {'tried':>5} {'solved':>9} {'rate':>5} {'submits':>7} "
        f"{'minutes':>7} {'hints':>5} {'reveals':>7}  flag"
    ]
    for s in stats:
        rate = f"{100 * s.solve_rate:.0f}%" if s.solve_rate is not None else "-"
        submits = f"{s.median_submits_to_solve:g}" if s.median_submits_to_solve else "-"
        seconds = s.median_seconds_to_solve
        minutes = f"{seconds / 60:.1f}" if seconds is not None else "-"
        flag = ""
        if s.flagged:
            cases = len(s.flaky_cases)
            flag = f"{cases} case{'s' * (cases > 1)}: {', '.join(s.flaky_tests)}"
        lines.append(
            f"{s.slug:32} {s.tried:>5} {f'{s.solved}/{s.submitted}':>9} {rate:>5} {submits:>7} "
            f"{minutes:>7} {s.hint_people:>5} {s.reveals:>7}  {flag}".rstrip()
        )
    return "\n".join(lines)


def _reset_password(engine: Engine, username: str) -> int:
    """The operator's way back in for someone who lost both password and recovery codes.
    The password is read without echo (or from standard input when it is not a terminal)."""
    if sys.stdin.isatty():
        password = getpass.getpass("New password: ")
        if getpass.getpass("Again: ") != password:
            print("The two passwords differ; nothing was changed.", file=sys.stderr)
            return 1
    else:
        password = sys.stdin.readline().rstrip("\n")
    with Session(engine) as session:
        try:
            user = recovery.set_password(session, username=username, new_password=password)
        except DomainError as exc:
            print(f"{exc.message} Nothing was changed.", file=sys.stderr)
            return 1
        session.commit()
        name = user.username
    print(f"{name} has a new password; every session and API token of theirs ended.")
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
