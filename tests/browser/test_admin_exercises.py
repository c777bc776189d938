"""The exercise insight in a real browser, as an admin: the table sorts by a header, a flag
opens to the two submissions, and axe finds no serious violation on either page at phone
and desktop size in both themes. Screenshots go to test-artifacts/screenshots/admin/."""

from __future__ import annotations

import uuid

import pytest
from fastapi import FastAPI
from playwright.sync_api import Browser
from sqlmodel import Session

from app.accounts import accounts
from tests.browser.conftest import ARTIFACTS
from tests.browser.test_accessibility import AXE, SIZES, _serious
from tests.support.submissions import REFORMATTED, add_submission

pytestmark = pytest.mark.browser
SLUG, HUGE = "warmup-cosine-schedule", "softmax of huge logits"


def test_an_admin_sorts_the_table_and_follows_a_flag(
    browser: Browser, live_server: str, live_app: FastAPI
) -> None:
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run .ci/setup --dev")
    engine = live_app.state.backprop.engine
    tag = uuid.uuid4().hex[:8]  # the live database is shared by the session's tests
    with Session(engine) as session:
        add_submission(session, slug=SLUG, visitor=f"{tag}-a", minutes=0, failing=(HUGE,))
        add_submission(session, slug=SLUG, visitor=f"{tag}-a", minutes=4, code=REFORMATTED)
        session.commit()
    context = browser.new_context(base_url=live_server, bypass_csp=True)
    page = context.new_page()
    username = f"author-{tag}"
    page.goto("/signup")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Create account").click()
    page.get_by_role("heading", name="Save your recovery codes").wait_for()
    with Session(engine) as session:
        accounts.set_admin(session, username=username, admin=True)
        session.commit()

    page.goto("/admin/exercises")
    page.get_by_role("link", name="Flag").click()
    page.wait_for_url("**/admin/exercises?sort=flag&order=desc")
    first = page.locator("tbody tr").first
    assert "flaky or wrong test" in first.inner_text()
    first.locator("summary").click()
    first.get_by_role("link", name="failed").click()
    page.get_by_role("heading", name=f"Submission to {SLUG}").wait_for()
    submission = page.url

    found = {}
    folder = ARTIFACTS / "admin"
    folder.mkdir(parents=True, exist_ok=True)
    for size, viewport in SIZES.items():
        page.set_viewport_size(viewport)
        for theme in ("light", "dark"):
            page.emulate_media(color_scheme=theme)
            for name, path in (
                ("exercises", "/admin/exercises?sort=flag"),
                ("submission", submission),
            ):
                page.goto(path)
                page.wait_for_load_state("networkidle")
                page.screenshot(path=str(folder / f"{name}-{size}-{theme}.png"), full_page=True)
                found[f"{name} {size} {theme}"] = _serious(page)
    context.close()
    assert {k: v for k, v in found.items() if v} == {}
