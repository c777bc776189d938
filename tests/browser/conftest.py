"""A real server on a free loopback port and Debian's Chromium driven by Playwright."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import uvicorn
from fastapi import FastAPI
from playwright.sync_api import Browser, ConsoleMessage, Page, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from app.main import create_app
from app.settings import PROJECT_ROOT, Settings
from tests.support import databases
from tests.support.sandbox_worker import WorkerHandle

CHROMIUM = os.environ.get("BACKPROP_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = PROJECT_ROOT / "test-artifacts" / "screenshots"
# Headless, and quiet: this machine has no network beyond package mirrors.
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def live_app(
    tmp_path_factory: pytest.TempPathFactory, imported_db_template: str, worker: WorkerHandle
) -> Iterator[FastAPI]:
    """The app the live server serves, over its own database copy, with the session's
    sandbox worker behind it (a test may swap `live_app.state.backprop.clock`, and must put
    it back)."""
    folder = tmp_path_factory.mktemp("live")
    with databases.copy_of(imported_db_template, folder) as database_url:
        yield create_app(
            Settings(
                database_url=database_url,
                data_dir=folder / "data",
                secret_key="browser-tests",
                sandbox_socket=worker.socket_path,
                runs_per_minute=100,
            )
        )


@pytest.fixture(scope="session")
def live_server(live_app: FastAPI) -> Iterator[str]:
    """The app served by uvicorn in a background thread."""
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(live_app, host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the test server did not start within 20 s")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: run ./scripts/test, which installs it")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Browser, live_server: str, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A fresh browser context (no saved theme), failing the test on any console error."""
    context = browser.new_context(
        base_url=live_server, viewport={"width": 1280, "height": 900}, color_scheme="light"
    )
    page = context.new_page()
    errors: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            errors.append(message.text)

    page.on("console", on_console)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    allowed = request.node.get_closest_marker("console_errors_expected")
    if allowed is None:
        assert errors == [], f"console errors: {errors}"


@pytest.fixture
def guest(browser: Browser, live_server: str) -> Iterator[Page]:
    """A fresh guest at desktop size whose pages may take axe's script (the app's policy is
    tested elsewhere); any console error of the app's own fails the test."""
    context = browser.new_context(
        base_url=live_server, viewport={"width": 1366, "height": 900}, bypass_csp=True
    )
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert errors == []


def screenshot(page: Page, name: str, *, full_page: bool = False) -> Path:
    """Save a screenshot under test-artifacts/screenshots/ and return its path."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    # caret="initial": hiding the caret injects a <style>, which our CSP rightly blocks.
    try:
        page.screenshot(path=str(path), full_page=full_page, caret="initial")
    except PlaywrightTimeout:
        # Now and then Chromium's capture itself never answers (a full CI run once: the call
        # log ended at "fonts loaded", then 30 s of nothing, on a page that had passed every
        # check). A picture for people to look at, not an assertion: asked once more.
        page.screenshot(path=str(path), full_page=full_page, caret="initial")
    return path


def sideways_scroll(page: Page) -> int:
    """How many CSS pixels the page is wider than its viewport (0 or less: it fits).

    Measured against the document's client width: a mobile browser lays a too-wide page out
    wider and widens window.innerWidth with it (745 px on a 390 px phone, measured), so a
    check against innerWidth never sees the overflow it is there to catch."""
    return int(
        page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    )


def pages_wider_than_their_viewport(
    page: Page, paths: list[str], ready: Callable[[Page, str], None] | None = None
) -> dict[str, int]:
    """Each of `paths` opened in `page` (and, with `ready`, waited for), by how many px it
    scrolls sideways; only the pages that do."""
    overflows: dict[str, int] = {}
    for path in paths:
        page.goto(path)
        if ready is not None:
            ready(page, path)
        if (overflow := sideways_scroll(page)) > 0:
            overflows[path] = overflow
    return overflows


class MovableClock:
    """Real time, plus an offset a test can move forward."""

    def __init__(self) -> None:
        self.offset = timedelta(0)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def advance(self, delta: timedelta) -> None:
        self.offset += delta


@pytest.fixture
def clock(live_app: FastAPI) -> Iterator[MovableClock]:
    state = live_app.state.backprop
    original = state.clock
    state.clock = MovableClock()
    try:
        yield state.clock
    finally:
        state.clock = original
