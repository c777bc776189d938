"""The Solution section in the browser, against the real grader: its words and its one
button follow the learner as their Submits are graded, without a reload (not tried, failed,
passed); the dialog opens on the safe choice; the revealed reference is highlighted and
copied with a spoken "Copied"; on a phone the comparison shows one file at a time, chosen
from the keyboard; and the page stays free of serious accessibility violations."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from app.settings import PROJECT_ROOT
from tests.browser.conftest import screenshot, sideways_scroll
from tests.browser.test_accessibility import AXE, SIZES, _serious
from tests.support.sandbox_worker import needs_isolation

pytestmark = [pytest.mark.browser, needs_isolation]
SLUG = "stable-softmax"
REFERENCE = (PROJECT_ROOT / "content" / "exercises" / SLUG / "reference.py").read_text()


def open_exercise(page: Page) -> None:
    page.goto(f"/exercises/{SLUG}")
    expect(page.locator(".cm-content")).to_contain_text("NotImplementedError", timeout=20_000)
    page.get_by_role("tab", name="Solution").click()  # beside the editor on a wide screen


def submit(page: Page, code: str | None, verdict: str) -> None:
    if code is not None:
        page.evaluate(
            "code => document.querySelector('article.exercise').backpropEditor.setValue(code)",
            code,
        )
    page.get_by_role("button", name="Submit").click()
    expect(page.locator("#grading-verdict .verdict")).to_have_text(verdict, timeout=60_000)


def test_a_failed_submit_opens_the_solution_and_a_phone_compares_one_file_at_a_time(
    guest: Page, live_server: str
) -> None:
    page = guest
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server)
    open_exercise(page)
    button = page.locator("#reveal-solution")
    # Not tried: one way in, giving up, and no word of a failed Submit.
    expect(button).to_have_text("Give up and see the solution")
    expect(page.locator("#reveal-note")).not_to_contain_text("failed")
    button.click()
    dialog = page.get_by_role("dialog", name="Give up and see the solution?")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("button", name="Keep trying")).to_be_focused()
    page.keyboard.press("Enter")  # the default keeps things as they were
    expect(dialog).to_be_hidden()
    expect(button).to_be_focused()
    expect(page.locator("#solution-code")).to_have_count(0)

    # The starter fails; the section says so at once, without a reload.
    submit(page, None, "Some tests failed")
    expect(button).to_have_text("Show the solution")
    expect(page.locator("#reveal-note")).to_contain_text("A Submit of yours failed")
    button.click()
    dialog = page.get_by_role("dialog", name="See the solution?")
    expect(dialog.get_by_role("button", name="Keep trying")).to_be_focused()
    dialog.get_by_role("button", name="Show it").click()
    expect(page.locator("#solution-heading")).to_be_focused()

    # Highlighted as an item's code is, and the editorial's heading comes once.
    code = page.locator("#solution-code")
    expect(code).to_contain_text("def softmax")
    expect(code.locator("span.k").first).to_have_text("def")
    section = page.locator("#solution-section")
    expect(section.get_by_text("Why it is written this way")).to_have_count(1)
    expect(page.locator("#solution-editorial h3").first).to_have_text("Why it is written this way")

    page.get_by_role("button", name="Copy the reference").click()
    expect(page.locator("#copy-solution-status")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()").strip() == REFERENCE.strip()
    page.locator("#solution-code").scroll_into_view_if_needed()
    screenshot(page, "exercise-solution-reference")
    assert AXE.exists(), "run .ci/setup --dev"
    assert _serious(page) == []

    # Wide: side by side, and no toggle.
    changed = page.locator("#solution-diff tr.diff-changed").first
    expect(changed.locator(".diff-mine")).to_be_visible()
    expect(changed.locator(".diff-ref")).to_be_visible()
    expect(page.locator("#solution-diff-sides")).to_be_hidden()

    # A phone: one file at a time, yours first; the other from the keyboard.
    page.set_viewport_size(SIZES["phone"])
    page.locator("#solution-diff").scroll_into_view_if_needed()
    mine = page.get_by_role("radio", name="Your code")
    reference = page.get_by_role("radio", name="Reference")
    expect(mine).to_be_checked()
    expect(changed.locator(".diff-mine")).to_be_visible()
    expect(changed.locator(".diff-ref")).to_be_hidden()
    expect(page.locator("#solution-diff th.side-ref")).to_be_hidden()
    # Each line of yours once, under your own line numbers, in order.
    numbers = page.locator("#solution-diff td.diff-num.side-mine:visible").all_inner_texts()
    assert numbers == [str(n) for n in range(1, len(numbers) + 1)] and numbers
    screenshot(page, "exercise-solution-diff-phone-mine")
    mine.focus()
    page.keyboard.press("ArrowRight")
    expect(reference).to_be_checked()
    expect(changed.locator(".diff-ref")).to_be_visible()
    expect(changed.locator(".diff-mine")).to_be_hidden()
    numbers = page.locator("#solution-diff td.diff-num.side-ref:visible").all_inner_texts()
    assert numbers == [str(n) for n in range(1, len(REFERENCE.splitlines()) + 1)]
    screenshot(page, "exercise-solution-diff-phone-reference")
    assert sideways_scroll(page) <= 0
    assert _serious(page) == []


def test_after_a_pass_the_reference_is_there_to_compare(guest: Page) -> None:
    page = guest
    open_exercise(page)
    submit(page, REFERENCE, "Every test passed")
    button = page.locator("#reveal-solution")
    expect(button).to_have_text("Compare with the reference")
    expect(page.locator("#reveal-note")).not_to_contain_text("failed")
    button.click()
    dialog = page.get_by_role("dialog", name="Compare with the reference?")
    expect(dialog).to_contain_text("Your pass stands")
    expect(dialog).not_to_contain_text("solved after reveal")
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    dialog.get_by_role("button", name="Show it").click()
    expect(page.locator("#solution-code")).to_contain_text("def softmax")
    expect(page.locator("#solution-section")).to_contain_text("line for line")
    assert _serious(page) == []
    # It was solved before the reveal, and stays so.
    page.goto("/exercises?status=solved")
    expect(
        page.get_by_role("link", name="Softmax and log-softmax that never overflow")
    ).to_be_visible()
