"""A failing visible test's case in the browser, against the real grader: code that
overflows on huge logits is run, the failing test shows a table of its input, the output,
the expected output and the largest difference, and "Copy as code" copies the snippet (or,
without a clipboard, shows it selected)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from app.settings import PROJECT_ROOT
from sandbox.grading.exercise import load
from tests.support.sandbox_worker import needs_isolation

pytestmark = [pytest.mark.browser, needs_isolation]
FOLDER = PROJECT_ROOT / "content" / "exercises" / "stable-softmax"


@pytest.fixture
def page(browser: Browser, live_server: str) -> Iterator[Page]:
    context = browser.new_context(
        base_url=live_server,
        viewport={"width": 1366, "height": 900},
        permissions=["clipboard-read", "clipboard-write"],
    )
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert errors == []


def test_a_failing_case_is_shown_and_copied_as_code(page: Page) -> None:
    buggy = load(FOLDER).mutants["no_max_subtraction"]
    page.goto("/exercises/stable-softmax")
    expect(page.locator(".cm-content")).to_contain_text("NotImplementedError", timeout=20_000)
    page.evaluate(
        "code => document.querySelector('article.exercise').backpropEditor.setValue(code)",
        buggy,
    )
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.locator("#grading-verdict .verdict")).to_have_text(
        "Some tests failed", timeout=60_000
    )
    failed = page.locator(".test-fail", has_text="softmax of huge logits")
    table = failed.locator(".case-table")
    expect(table).to_be_visible()
    expect(table.locator("caption")).to_contain_text("The failing case (seed ")
    expect(table.locator("th")).to_have_text(
        ["Input", "Your output", "Expected", "Largest difference"]
    )
    expect(table.locator("tr", has_text="Input")).to_contain_text("x = ")
    expect(table.locator("tr", has_text="Your output")).to_contain_text("nan")
    expect(table.locator("tr", has_text="Largest difference")).to_contain_text("got nan")

    failed.get_by_role("button", name="Copy as code").click()
    expect(failed.locator(".case-copy-status")).to_have_text("Copied")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith("# The failing case of the test 'softmax of huge logits'")
    assert "softmax(x_in, dim=-1)" in copied

    # Without a clipboard the snippet is shown, selected, for the keyboard to copy.
    page.evaluate(
        "() => { navigator.clipboard.writeText = () => Promise.reject(new Error('denied')); }"
    )
    failed.get_by_role("button", name="Copy as code").click()
    area = failed.locator("textarea.case-snippet")
    expect(area).to_be_visible()
    expect(failed.locator(".case-copy-status")).to_contain_text("Selected")
    assert area.input_value() == copied
    assert page.evaluate("document.activeElement.classList.contains('case-snippet')")
