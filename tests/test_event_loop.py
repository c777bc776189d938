"""The event loop never waits on the database (docs/architecture.md, "Database work and the
event loop"): walks every `async def` of the HTTP edge and the services with `ast` and fails
where one does database work itself instead of handing it to a thread.

What counts as database work in an `async def`:
- opening a session or a connection (`Session(...)`, `.connect()`, `.begin()`), or using one
  (`.execute`, `.exec`, `.commit`, `.flush`, `.get`, `.scalar`...) on a name that holds one;
- calling anything with an engine, a session, a connection or a learner scope as an
  argument, unless the call is awaited (an async service, which keeps this rule itself) or
  is the hand-over to a thread (`asyncio.to_thread`, `run_in_executor`);
- taking a request's session (`SessionDep`) as a parameter: async code has no use for one;
- reading the app's clock (`.clock()`), which asks the database on PostgreSQL.
Plain `def` functions are not walked: FastAPI runs handlers and dependencies that are plain
`def` in its thread pool, and helpers are called in threads."""

from __future__ import annotations

import ast
from pathlib import Path

from app.settings import PROJECT_ROOT
from tests.test_architecture import FEATURES

WALKED = ("app/deps.py", "app/web", *(f"app/{f}" for f in (*FEATURES, "platform")))
DATABASE_NAMES = frozenset({"engine", "session", "connection", "conn", "scope", "learner"})
# In the middleware of app/web, `scope` is the ASGI scope, never a learner's.
ASGI_NAMES = DATABASE_NAMES - {"scope"}
OPENERS = frozenset({"Session", "connect", "begin"})
USES = frozenset({"execute", "exec", "commit", "flush", "scalar", "scalars", "refresh", "rollback"})
HAND_OVERS = frozenset({"to_thread", "run_in_executor", "run_sync", "run_in_threadpool"})
# The one async function allowed to hold a session: the dependency that makes it (and ends
# it off the loop).
MAKERS = frozenset({("app/deps.py", "_session")})


def _files() -> list[Path]:
    found: list[Path] = []
    for entry in WALKED:
        path = PROJECT_ROOT / entry
        found += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return found


def _name_of(node: ast.expr) -> str | None:
    """`engine` for engine, self.engine, state.engine or scope.session's last part."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _called(node: ast.Call) -> str | None:
    return _name_of(node.func)


class _AsyncBody(ast.NodeVisitor):
    """Visits one async function's own body: nested plain functions are not its own code
    (they are what it hands to threads), nested async ones are checked on their own."""

    def __init__(self, names: frozenset[str]) -> None:
        self.names = names
        self.problems: list[tuple[int, str]] = []
        self.awaited: set[int] = set()
        self.handed_over: set[int] = set()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        return

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        return

    def visit_Lambda(self, node: ast.Lambda) -> None:
        return

    def visit_Await(self, node: ast.Await) -> None:
        if isinstance(node.value, ast.Call):
            self.awaited.add(id(node.value))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        called = _called(node)
        if called in HAND_OVERS:
            self.handed_over.add(id(node))
        if called in OPENERS:
            self.problems.append((node.lineno, f"opens the database ({called})"))
        elif called in USES and isinstance(node.func, ast.Attribute):
            owner = _name_of(node.func.value)
            if owner in self.names:
                self.problems.append((node.lineno, f"uses the database ({owner}.{called})"))
        elif called == "clock":
            self.problems.append((node.lineno, "reads the app's clock (a query on PostgreSQL)"))
        arguments = [*node.args, *(k.value for k in node.keywords)]
        passes = [a for a in arguments if _name_of(a) in self.names]
        if passes and id(node) not in self.awaited and called not in HAND_OVERS:
            self.problems.append((node.lineno, f"calls {called}() with {_name_of(passes[0])}"))
        self.generic_visit(node)


def _awaited_calls(node: ast.AST) -> list[ast.Call]:
    """The calls `node` awaits: `await f(...)`, `async for _ in f(...)`, `f(...).__aiter__()`."""
    if isinstance(node, ast.Await | ast.AsyncFor):
        value = node.value if isinstance(node, ast.Await) else node.iter
        return [value] if isinstance(value, ast.Call) else []
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "__aiter__"
        and isinstance(node.func.value, ast.Call)
    ):
        return [node.func.value]
    return []


def problems_in(source: str, rel: str) -> list[str]:
    """Where the async functions of one module do database work on the loop."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.AsyncFunctionDef) or (rel, node.name) in MAKERS:
            continue
        for arg in [*node.args.args, *node.args.kwonlyargs]:
            if isinstance(arg.annotation, ast.Name) and arg.annotation.id == "SessionDep":
                found.append(f"{rel}:{node.lineno} {node.name}() takes a SessionDep")
        body = _AsyncBody(ASGI_NAMES if rel.startswith("app/web/") else DATABASE_NAMES)
        # Awaited calls (and async iterators: an async generator is a service of its own)
        # are collected first, so that a call is judged knowing it is awaited.
        for statement in node.body:
            for inner in ast.walk(statement):
                body.awaited.update(id(call) for call in _awaited_calls(inner))
            body.visit(statement)
        found += [f"{rel}:{line} {node.name}() {what}" for line, what in body.problems]
    return found


def test_no_async_function_does_database_work_on_the_event_loop() -> None:
    found: list[str] = []
    for path in _files():
        rel = path.relative_to(PROJECT_ROOT).as_posix()
        found += problems_in(path.read_text(encoding="utf-8"), rel)
    assert found == []


def test_the_rule_catches_database_work_on_the_loop() -> None:
    bad = """
async def page(request, session: SessionDep, engine):
    with engine.connect() as connection:
        connection.execute(QUERY)
    rows = items.item_detail(engine, slug="x")
    now = state.clock()
    return rows

async def fine(engine, queue, scope):
    status = await queue.status()
    page = await asyncio.to_thread(open_item, engine, scope, slug="x")
    run = await runs.submit(engine, queue)
    async for event in run_stream.follow(engine, queue):
        pass

    def in_a_thread():
        with Session(engine) as session:
            session.commit()
    return page
"""
    found = problems_in(bad, "example.py")
    assert found == [
        "example.py:2 page() takes a SessionDep",
        "example.py:3 page() opens the database (connect)",
        "example.py:4 page() uses the database (connection.execute)",
        "example.py:5 page() calls item_detail() with engine",
        "example.py:6 page() reads the app's clock (a query on PostgreSQL)",
    ]
