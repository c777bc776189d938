"""The exercise workspace walked as a learner walks it, on a laptop (1366x900: the statement
beside the editor) and a phone (390x844: the editor a tab away), in light and dark, against
the real grader: open, write, Run and fail a visible case, see it and copy it as code, fix,
Submit and pass, reload and find the result and the history, compare a past submission,
reveal the reference. At 1366x900 the editor, Run, Submit and the latest verdict are on
screen together. A running grading can be cancelled."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from app.settings import PROJECT_ROOT
from sandbox.grading.exercise import load
from tests.browser.conftest import screenshot, sideways_scroll
from tests.browser.test_accessibility import AXE, SIZES, _serious
from tests.support.sandbox_worker import needs_isolation

pytestmark = [pytest.mark.browser, needs_isolation]
FOLDER = PROJECT_ROOT / "content" / "exercises" / "stable-softmax"
LAPTOP = {"width": 1366, "height": 900}
VIEWPORTS = {"laptop": LAPTOP, "phone": SIZES["phone"]}
SLOW_MS = 60_000  # a grading on the shared two-core machine


def workspace(browser: Browser, live_server: str, size: str) -> Iterator[Page]:
    context = browser.new_context(
        base_url=live_server,
        viewport=VIEWPORTS[size],
        is_mobile=size == "phone",
        color_scheme="light",
        permissions=["clipboard-read", "clipboard-write"],
        bypass_csp=True,  # for axe's own script only
    )
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    yield page
    context.close()
    assert errors == []


@pytest.fixture(params=list(VIEWPORTS))
def learner(request: pytest.FixtureRequest, browser: Browser, live_server: str) -> Iterator[Page]:
    yield from workspace(browser, live_server, request.param)


def on_screen_together(page: Page, *selectors: str) -> dict[str, dict[str, float]]:
    """Each element's box, asserted to lie wholly inside the viewport (no scrolling)."""
    size = page.viewport_size
    assert size
    boxes = {}
    for selector in selectors:
        box = page.locator(selector).bounding_box()
        assert box, f"{selector} is not shown"
        inside = (
            box["x"] >= 0
            and box["y"] >= 0
            and box["x"] + box["width"] <= size["width"]
            and box["y"] + box["height"] <= size["height"]
        )
        assert inside, f"{selector} is off screen at {size}: {box}"
        boxes[selector] = box
    return boxes


def set_code(page: Page, code: str) -> None:
    page.evaluate(
        "code => document.querySelector('article.exercise').backpropEditor.setValue(code)", code
    )


def both_themes_clean(page: Page, name: str) -> None:
    assert AXE.exists(), "run .ci/setup --dev"
    for theme in ("light", "dark"):
        page.emulate_media(color_scheme=theme)
        screenshot(page, f"{name}-{theme}")
        assert _serious(page) == [], theme
    page.emulate_media(color_scheme="light")


def test_the_whole_path_in_the_workspace(learner: Page) -> None:
    page = learner
    phone = (page.viewport_size or {}).get("width", 0) < 1200
    size = "phone" if phone else "laptop"

    def show(tab: str) -> None:
        page.get_by_role("tab", name=tab, exact=True).click()

    page.goto("/exercises/stable-softmax")
    expect(page.locator(".cm-content")).to_contain_text("NotImplementedError", timeout=20_000)
    if phone:  # the statement first, the editor a tab away
        expect(page.locator(".statement")).to_be_visible()
        expect(page.locator(".cm-editor")).to_be_hidden()
        show("Code")
        expect(page.locator(".statement")).to_be_hidden()
    else:  # side by side
        statement = page.locator(".statement").bounding_box()
        editor = page.locator(".cm-editor").bounding_box()
        assert statement and editor and statement["x"] + statement["width"] <= editor["x"]
    expect(page.locator(".cm-editor")).to_be_visible()

    # Write code that overflows, Run, and fail a visible case.
    set_code(page, load(FOLDER).mutants["no_max_subtraction"])
    page.get_by_role("button", name="Run", exact=True).click()
    verdict = page.locator("#grading-verdict .verdict")
    expect(verdict).to_have_text("Some tests failed", timeout=SLOW_MS)
    failed = page.locator(".test-fail", has_text="softmax of huge logits")
    case = failed.locator(".case-table")
    expect(case).to_be_visible()
    expect(case.locator("th")).to_have_text(
        ["Input", "Your output", "Expected", "Largest difference"]
    )
    if not phone:
        on_screen_together(page, ".cm-editor", "#run-tests", "#submit-tests", "#grading-verdict")
    failed.get_by_role("button", name="Copy as code").click()
    expect(failed.locator(".case-copy-status")).to_have_text("Copied")
    snippet = page.evaluate("navigator.clipboard.readText()")
    assert "softmax(x_in, dim=-1)" in snippet
    both_themes_clean(page, f"workspace-{size}-failed-case")

    # Fix it and Submit: every test passes, the verdict in view beside the editor.
    reference = (FOLDER / "reference.py").read_text()
    set_code(page, reference)
    page.get_by_role("button", name="Submit").click()
    expect(verdict).to_have_text("Every test passed", timeout=SLOW_MS)
    if not phone:
        boxes = on_screen_together(
            page, ".cm-editor", "#run-tests", "#submit-tests", "#grading-verdict"
        )
        print({k: (round(v["x"]), round(v["y"])) for k, v in boxes.items()})  # for the record
    screenshot(page, f"workspace-{size}-passed")

    # Reload: the result is still there, and the history holds both gradings with code.
    page.reload()
    expect(page.locator(".cm-content")).to_contain_text("def softmax", timeout=20_000)
    expect(verdict).to_have_text("Every test passed")
    expect(page.locator(".verdict-when")).to_contain_text("kept from before")
    show("Submissions")
    rows = page.locator(".submission-row")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("Submit")
    expect(rows.nth(0)).to_contain_text("Passed")
    expect(rows.nth(1)).to_contain_text("Run")
    expect(rows.nth(1)).to_contain_text("Failed")
    rows.nth(1).locator("summary").click()
    expect(rows.nth(1).locator(".submission-code")).to_contain_text("def softmax")
    rows.nth(1).get_by_role("button", name="Compare with the editor's code").click()
    diff = rows.nth(1).locator("table.diff")
    expect(diff).to_be_attached()
    expect(diff.locator("tr.diff-changed, tr.diff-added, tr.diff-removed").first).to_be_attached()
    if phone:  # one file at a time
        expect(rows.nth(1).locator(".diff-sides")).to_be_visible()
    assert sideways_scroll(page) <= 0
    both_themes_clean(page, f"workspace-{size}-history")

    # Reveal: the reference, highlighted, beside the last submission.
    show("Solution")
    page.get_by_role("button", name="Compare with the reference").click()
    page.get_by_role("dialog").get_by_role("button", name="Show it").click()
    expect(page.locator("#solution-code")).to_contain_text("def softmax")
    expect(page.locator("#solution-section")).to_contain_text("the same, line for line")
    both_themes_clean(page, f"workspace-{size}-solution")


def test_a_running_submission_can_be_cancelled(browser: Browser, live_server: str) -> None:
    for page in workspace(browser, live_server, "laptop"):
        page.goto("/exercises/stable-softmax")
        expect(page.locator(".cm-content")).to_contain_text("NotImplementedError", timeout=20_000)
        set_code(page, "while True:\n    pass\n")
        cancel = page.get_by_role("button", name="Cancel")
        expect(cancel).to_be_hidden()
        page.get_by_role("button", name="Submit").click()
        expect(cancel).to_be_visible()
        cancel.click()
        expect(page.locator("#grading-verdict .verdict")).to_have_text("Cancelled", timeout=SLOW_MS)
        expect(cancel).to_be_hidden()
        expect(page.get_by_role("button", name="Submit")).to_be_enabled()
