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


# The features, lowest first: each may use those before it, never one after it (the map in
# docs/architecture.md draws the same order). Shared plumbing sits below them all.
FEATURES = (
    "library",
    "runs",
    "labs",
    "exercises",
    "progress",
    "study",
    "interview",
    "reader",
    "accounts",
    "admin",
)
# Rules every feature shares (learner resolution, rate limits), at the services' level.
PLATFORM = "app.platform"
FEATURE_PACKAGES = tuple(f"app.{f}" for f in FEATURES)
WEB = ("fastapi", "starlette", "app.web", "app.deps", "app.main")


def feature_of(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "app" and parts[1] in FEATURES else None


def layer_of(name: str) -> str:
    """'routes', 'schemas' or 'services' for a module of a feature (by its sub-package)."""
    parts = name.split(".")
    return parts[2] if len(parts) > 2 and parts[2] in ("routes", "schemas") else "services"


def is_web(name: str) -> bool:
    """Whether an imported name belongs to the HTTP side: the frameworks, the web edge, or a
    feature's routes or schemas."""
    if any(name == w or name.startswith(w + ".") for w in WEB):
        return True
    return feature_of(name) is not None and layer_of(name) != "services"


def feature_modules() -> list[Path]:
    return [p for f in FEATURES for p in modules(f"app/{f}")]


def upward_imports() -> list[tuple[str, str]]:
    """(module, import) pairs where a feature uses one declared above it."""
    rank = {f: i for i, f in enumerate(FEATURES)}
    bad = []
    for path in feature_modules():
        own = feature_of(module_name(path))
        for name in imports_of(path):
            other = feature_of(name)
            if own and other and rank[other] > rank[own]:
                bad.append((module_name(path), name))
    return sorted(set(bad))


def test_every_package_of_the_app_is_a_feature_or_shared_plumbing() -> None:
    """A new folder under app/ takes a place in the declared order (or among the plumbing)."""
    shared = {"agent", "importer", "migrations", "models", "platform", "runqueue", "web"}
    folders = {p.name for p in (PROJECT_ROOT / "app").iterdir() if (p / "__init__.py").exists()}
    assert folders - shared == set(FEATURES)


def test_a_feature_uses_only_the_features_below_it() -> None:
    assert upward_imports() == []


def test_inside_a_feature_services_never_import_the_web_side() -> None:
    """routes -> schemas -> services -> models: a service is plain Python over a session."""
    bad = []
    for path in [*feature_modules(), *modules("app/platform")]:
        name = module_name(path)
        if feature_of(name) is None or layer_of(name) == "services":
            bad += [(name, i) for i in imports_of(path) if is_web(i)]
    assert sorted(set(bad)) == []


def test_schemas_never_import_routes() -> None:
    bad = []
    for path in feature_modules():
        name = module_name(path)
        if layer_of(name) == "schemas":
            bad += [
                (name, i) for i in imports_of(path) if feature_of(i) and layer_of(i) == "routes"
            ]
    assert bad == []


def test_the_declared_order_is_the_one_the_map_draws() -> None:
    doc = (PROJECT_ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    drawn = re.findall(r"^\| \d+ \| `app/(\w+)/`", doc, flags=re.M)
    assert tuple(drawn) == FEATURES


def features_used() -> dict[str, set[str]]:
    """feature -> the other features its modules import today."""
    used: dict[str, set[str]] = {f: set() for f in FEATURES}
    for path in feature_modules():
        own = feature_of(module_name(path))
        assert own is not None
        used[own] |= {o for n in imports_of(path) if (o := feature_of(n)) and o != own}
    return used


def test_the_map_says_what_each_feature_uses() -> None:
    """The map's last column is what each feature's code imports, no more and no less."""
    doc = (PROJECT_ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| \d+ \| `app/(\w+)/` \| .* \| ([^|]*) \|$", doc, flags=re.M)
    drawn = {f: {u.strip() for u in uses.split(",")} - {"—", ""} for f, uses in rows}
    assert drawn == features_used()


def test_the_rules_see_an_upward_import() -> None:
    assert feature_of("app.exercises.routes.coding") == "exercises"
    assert layer_of("app.exercises.routes.coding") == "routes"
    assert layer_of("app.exercises.hints") == "services"
    assert is_web("app.study.schemas") and not is_web("app.study.quizzes")
    assert feature_of("app.platform.learners") is None


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
    above = (*FEATURE_PACKAGES, PLATFORM, "app.runqueue", "app.importer", *WEB)
    names = imports_of(PROJECT_ROOT / base)
    assert [n for n in names if any(n == a or n.startswith(a + ".") for a in above)] == []


def test_shared_rules_use_no_feature() -> None:
    assert violations("app/platform", (*FEATURE_PACKAGES, *WEB)) == []


def test_the_run_queue_imports_only_the_sandbox_protocol() -> None:
    assert (
        violations("app/runqueue", ("app", "sandbox"), allow=("app.runqueue", "sandbox.protocol"))
        == []
    )


def test_the_runner_agent_imports_no_database_services_or_web_code() -> None:
    """An agent runs on a worker host with no database credentials: it speaks Redis and the
    worker's socket, through the run queue's fleet modules."""
    forbidden = (
        "app.db",
        "app.models",
        "app.settings",
        *FEATURE_PACKAGES,
        PLATFORM,
        "app.importer",
    )
    assert violations("app/agent", (*forbidden, "sqlalchemy", "sqlmodel", *WEB)) == []
    allowed = ("app.agent", "app.runqueue", "app.logs")  # logs: its lines carry the run id
    assert violations("app/agent", ("app",), allow=allowed) == []


def test_a_route_never_imports_another_route() -> None:
    bad = []
    for path in feature_modules():
        own = module_name(path)
        if layer_of(own) == "routes":
            bad += [
                (own, n)
                for n in imports_of(path)
                if layer_of(n) == "routes" and feature_of(n)
                if not own.startswith(n)  # its own package
            ]
    assert bad == []


def test_the_sandbox_imports_nothing_of_the_app() -> None:
    assert violations("sandbox", ("app",)) == []


def test_the_importer_and_web_layer_stay_below_the_routes() -> None:
    routes = tuple(f"app.{f}.routes" for f in FEATURES)
    assert violations("app/importer", (*WEB, *FEATURE_PACKAGES)) == []
    assert violations("app/web", (*routes, "app.deps", "app.main")) == []


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
    sample.write_text("from fastapi import Request\nimport app.reader.routes.pages\n")
    assert {"fastapi", "fastapi.Request", "app.reader.routes.pages"} <= imports_of(sample)


def test_the_tests_mirror_the_features() -> None:
    """Each feature's tests sit in tests/<feature>/, and no test folder is left over from the
    layers the code no longer has."""
    tests = PROJECT_ROOT / "tests"
    untested = [f for f in FEATURES if not list((tests / f).glob("test_*.py"))]
    assert untested == []
    assert not (tests / "routes").exists() and not (tests / "services").exists()
