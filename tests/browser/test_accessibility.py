"""axe-core over every kind of page, at phone and desktop size, in both themes: no serious or
critical violation, and none wider than a phone. Screenshots of each go to
test-artifacts/screenshots/a11y/."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from tests.browser.conftest import ARTIFACTS, pages_wider_than_their_viewport, sideways_scroll

pytestmark = pytest.mark.browser

AXE = Path(__file__).parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"
SIZES = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1366, "height": 900}}
PAGES = {
    "home": "/",
    "library": "/items",
    "search": "/items?q=dropout",
    "item": "/items/batch-normalization",
    "lab": "/items/lab-elementwise-chain",
    "quizzes": "/quizzes",
    "review": "/review",
    "dashboard": "/dashboard",
    "signup": "/signup",
    "signin": "/signin",
    "forgot": "/forgot",
    "not-found": "/items/no-such-question",
    "exercises": "/exercises",
    "exercise": "/exercises/stable-softmax",
}


@pytest.fixture(scope="module", params=[(s, t) for s in SIZES for t in ("light", "dark")],
                ids=lambda p: f"{p[0]}-{p[1]}")  # fmt: skip
def themed(request: pytest.FixtureRequest, browser: Browser, live_server: str) -> Iterator[Page]:
    size, theme = request.param
    context = browser.new_context(
        base_url=live_server,
        viewport=SIZES[size],
        color_scheme=theme,
        is_mobile=size == "phone",
        bypass_csp=True,  # for axe's own script only; the app's policy is tested elsewhere
    )
    page = context.new_page()
    page.backprop_name = f"{size}-{theme}"  # type: ignore[attr-defined]
    yield page
    context.close()


def _serious(page: Page) -> list[str]:
    page.add_script_tag(path=str(AXE))
    results = page.evaluate(
        """async () => {
            const r = await axe.run(document, {resultTypes: ["violations"]});
            return r.violations.filter((v) => ["serious", "critical"].includes(v.impact))
              .map((v) => ({id: v.id, impact: v.impact,
                            nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" "))}));
        }"""
    )
    return [json.dumps(v) for v in results]


@pytest.mark.parametrize("name", list(PAGES))
def test_no_serious_accessibility_violation(themed: Page, name: str) -> None:
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run .ci/setup --dev")
    themed.goto(PAGES[name])
    themed.wait_for_load_state("networkidle")
    folder = ARTIFACTS / "a11y"
    folder.mkdir(parents=True, exist_ok=True)
    themed.screenshot(path=str(folder / f"{name}-{themed.backprop_name}.png"), full_page=True)  # type: ignore[attr-defined]
    assert _serious(themed) == []


def test_no_kind_of_page_is_wider_than_a_phone(browser: Browser, live_server: str) -> None:
    context = browser.new_context(base_url=live_server, viewport=SIZES["phone"], is_mobile=True)
    page = context.new_page()
    overflows = pages_wider_than_their_viewport(
        page, list(PAGES.values()), lambda page, _: page.wait_for_load_state("networkidle")
    )
    context.close()
    assert overflows == {}, f"pages that scroll sideways on a phone, by px: {overflows}"


def test_no_serious_violation_on_a_quiz_and_the_account_pages(
    browser: Browser, live_server: str
) -> None:
    """Pages that need a started quiz or an account: made once, then seen at each size and
    theme (the live server allows few sign-ups per client)."""
    context = browser.new_context(base_url=live_server, bypass_csp=True)
    page = context.new_page()
    page.goto("/quizzes")
    form = page.locator("form.quiz-form")
    form.get_by_label("Timed: answers and explanations at the end").check()
    form.get_by_role("button", name="Start the quiz").click()
    page.wait_for_url("**/quizzes/*")
    quiz = page.url
    page.goto("/signup")
    page.get_by_label("Username").fill(f"a11y-{uuid.uuid4().hex[:8]}")
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Create account").click()
    page.get_by_role("heading", name="Save your recovery codes").wait_for()
    found = {"recovery codes": _serious(page)}
    for size, viewport in SIZES.items():
        page.set_viewport_size(viewport)
        for theme in ("light", "dark"):
            page.emulate_media(color_scheme=theme)
            for name, path in (
                ("quiz", quiz),
                ("account", "/account"),
                ("codes", "/account/recovery-codes"),
            ):
                page.goto(path)
                page.wait_for_load_state("networkidle")
                found[f"{name} {size} {theme}"] = _serious(page)
                if (overflow := sideways_scroll(page)) > 0:
                    found[f"{name} {size} {theme}"].append(f"scrolls sideways by {overflow}px")
    context.close()
    assert {k: v for k, v in found.items() if v} == {}
