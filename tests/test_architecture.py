"""The layers of docs/architecture.md, held as rules over the code's imports: each layer
imports only the layers below it. Walks app/ and sandbox/ with `ast`, so a forbidden import
fails here whether or not any test exercises it."""

from __future__ import annotations

import ast
import re
import statistics
from pathlib import Path

import pytest

from app.settings import PROJECT_ROOT

MAX_MODULE_LINES = 300  # above it, docs/architecture.md says why ("Module size")
MEDIAN_MODULE_LINES = 150
# Generated Alembic revisions are exempt from the size rule.
SIZE_EXEMPT = ("app/migrations/",)


def modules(package: str) -> list[Path]:
    return sorted((PROJECT_ROOT / package).rglob("*.py"))


def module_name(path: Path) -> str:
    parts = path.relative_to(PROJECT_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every module `path` imports, absolute (relative imports resolved)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: counted from the module's own package
                package = module_name(path).split(".")
                if path.name != "__init__.py":
                    package = package[:-1]
                parent = ".".join(package[: len(package) - node.level + 1])
                base = f"{parent}.{node.module}" if node.module else parent
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def violations(package: str, forbidden: tuple[str, ...], *, allow: tuple[str, ...] = ()) -> list:
    """(module, import) pairs where a module of `package` imports a forbidden prefix."""
    bad = []
    for path in modules(package):
        for name in imports_of(path):
            hit = any(name == f or name.startswith(f + ".") for f in forbidden)
            allowed = any(name == a or name.startswith(a + ".") for a in allow)
            if hit and not allowed:
                bad.append((module_name(path), name))
    return sorted(set(bad))


WEB = ("fastapi", "starlette", "app.web", "app.routes", "app.deps", "app.main", "app.schemas")


def test_domain_imports_nothing_of_the_app() -> None:
    assert [n for n in imports_of(PROJECT_ROOT / "app/domain.py") if n.startswith("app")] == []


@pytest.mark.parametrize(
    "base",
    [
        *(p.relative_to(PROJECT_ROOT).as_posix() for p in modules("app/models")),
        "app/db.py",
        "app/prepared.py",
        "app/settings.py",
        "app/logs.py",
        "app/metrics.py",
    ],
)
def test_models_db_and_settings_import_no_layer_above_them(base: str) -> None:
    above = ("app.services", "app.runqueue", "app.importer", *WEB)
    names = imports_of(PROJECT_ROOT / base)
    assert [n for n in names if any(n == a or n.startswith(a + ".") for a in above)] == []


def test_services_never_import_the_web_layer() -> None:
    assert violations("app/services", WEB) == []


def test_the_run_queue_imports_only_the_sandbox_protocol() -> None:
    assert (
        violations("app/runqueue", ("app", "sandbox"), allow=("app.runqueue", "sandbox.protocol"))
        == []
    )


def test_the_runner_agent_imports_no_database_services_or_web_code() -> None:
    """An agent runs on a worker host with no database credentials: it speaks Redis and the
    worker's socket, through the run queue's fleet modules."""
    forbidden = ("app.db", "app.models", "app.services", "app.settings", "app.importer")
    assert violations("app/agent", (*forbidden, "sqlalchemy", "sqlmodel", *WEB)) == []
    allowed = ("app.agent", "app.runqueue", "app.logs")  # logs: its lines carry the run id
    assert violations("app/agent", ("app",), allow=allowed) == []


def test_a_route_never_imports_another_route() -> None:
    bad = []
    for path in modules("app/routes"):
        own = module_name(path)
        bad += [(own, n) for n in imports_of(path) if n.startswith("app.routes.") and n != own]
    assert bad == []


def test_the_sandbox_imports_nothing_of_the_app() -> None:
    assert violations("sandbox", ("app",)) == []


def test_the_importer_and_web_layer_stay_below_the_routes() -> None:
    assert violations("app/importer", WEB) == []
    assert violations("app/web", ("app.routes", "app.deps", "app.main")) == []


def module_lines() -> dict[str, int]:
    found = {}
    for path in [*modules("app"), *modules("sandbox")]:
        rel = path.relative_to(PROJECT_ROOT).as_posix()
        if not rel.startswith(SIZE_EXEMPT):
            found[rel] = len(path.read_text(encoding="utf-8").splitlines())
    return found


def listed_as_long(text: str) -> dict[str, str]:
    """docs/architecture.md's "Module size" list: `- `path`: why it stays whole`."""
    section = text.split("## Module size", 1)[1].split("\n## ", 1)[0]
    pairs = re.findall(r"^- `([^`]+)`: (.+)$", section, flags=re.M)
    return {path: why.strip() for path, why in pairs}


def test_a_module_over_300_lines_is_listed_with_its_reason() -> None:
    """The cap is a guard for outliers: a longer module says in docs/architecture.md why it
    stays whole, and a listed one that shrank (or went) comes off the list."""
    doc = (PROJECT_ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    listed = listed_as_long(doc)
    lines = module_lines()
    long = {rel for rel, n in lines.items() if n > MAX_MODULE_LINES}
    assert long - set(listed) == set(), "over 300 lines, not listed in docs/architecture.md"
    assert set(listed) - long == set(), "listed in docs/architecture.md, no longer over 300"


def test_the_median_module_stays_small() -> None:
    assert statistics.median(module_lines().values()) <= MEDIAN_MODULE_LINES


def test_the_list_of_long_modules_is_read() -> None:
    text = (
        "## Module size\n\n- `app/a.py`: one table\n- `app/b.py`: one walk\n\n## Next\n- `x`: y\n"
    )
    assert listed_as_long(text) == {"app/a.py": "one table", "app/b.py": "one walk"}


def import_graph(packages: tuple[str, ...]) -> dict[str, set[str]]:
    """module -> the project modules it imports, every import counted (those under
    TYPE_CHECKING and inside functions too). `from pkg import sub` counts as pkg.sub alone."""
    paths = {module_name(p): p for package in packages for p in modules(package)}
    graph = {}
    for name, path in paths.items():
        deps = {i for i in imports_of(path) if i in paths and i != name}
        graph[name] = {
            d
            for d in deps
            if not (paths[d].name == "__init__.py" and any(o.startswith(d + ".") for o in deps))
        }
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or round a loop."""
    reach = {name: set(deps) for name, deps in graph.items()}
    changed = True
    while changed:  # transitive closure: small graphs, a few passes
        changed = False
        for deps in reach.values():
            more = set().union(*(reach.get(d, set()) for d in deps)) - deps
            if more:
                deps |= more
                changed = True
    groups = {frozenset({n} | {d for d in reach[n] if n in reach.get(d, set())}) for n in reach}
    return sorted(sorted(g) for g in groups if len(g) > 1)


def test_no_module_imports_one_that_imports_it_back() -> None:
    """No import cycles anywhere in app/ or sandbox/, not even for type hints: a module that
    needs another's type either sits above it or meets it in a module below both (as
    sandbox/jail_spec.py, or the agent's upkeep.Upkept)."""
    assert cycles(import_graph(("app", "sandbox"))) == []


def test_a_cycle_is_seen() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_rules_catch_a_forbidden_import(tmp_path: Path) -> None:
    """The walker itself: a service importing FastAPI is seen."""
    sample = tmp_path / "bad.py"
    sample.write_text("from fastapi import Request\nimport app.routes.pages\n")
    assert {"fastapi", "fastapi.Request", "app.routes.pages"} <= imports_of(sample)
