"""An exercise in the browser, as a guest, against the real grader: a failing submission
shows its failures grouped by category with the first one open, offers the failing
category's hint and opens the solution (confirmed) with the diff, one file at a time on a
phone; the reference then passes, and the list and the item page say it was solved after
reveal. The page stays free of serious accessibility violations with results, hints and the
diff. Every exercise's page fits a phone's width."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from app.settings import PROJECT_ROOT
from tests.browser.conftest import pages_wider_than_their_viewport, screenshot
from tests.browser.test_accessibility import AXE, SIZES, _serious
from tests.support.sandbox_worker import needs_isolation

pytestmark = [pytest.mark.browser, needs_isolation]
EXERCISES = PROJECT_ROOT / "content" / "exercises"
FOLDER = EXERCISES / "stable-softmax"


def test_a_failing_then_a_passing_submission(guest: Page) -> None:
    page = guest
    page.goto("/exercises")
    page.get_by_role("link", name="Softmax and log-softmax that never overflow").click()
    expect(page.locator("h1")).to_have_text("Softmax and log-softmax that never overflow")
    editor = page.locator(".cm-content")
    expect(editor).to_contain_text("NotImplementedError", timeout=20_000)

    editor.click()
    page.keyboard.press("Control+Shift+Enter")  # Submit: every test
    verdict = page.locator("#grading-verdict .verdict")
    expect(verdict).to_have_text("Some tests failed", timeout=60_000)
    groups = page.locator("details.test-group")
    expect(groups.first).to_be_visible()
    opened = page.locator("details.test-group[open]")
    expect(opened).to_have_count(1)  # the first failure's group, and only it
    expect(opened.locator(".test-error, .test-fail").first).to_be_visible()
    assert page.locator(".test .badge", has_text="hidden").count() > 0
    screenshot(page, "exercise-failed", full_page=True)
    assert AXE.exists(), "run .ci/setup --dev"
    assert _serious(page) == []

    # The results point to a hint for the failing category; from the keyboard it is shown,
    # and the panel says what it answers.
    expect(page.locator("#hint-nudge")).to_contain_text("A hint answers the failing edge cases")
    expect(page.locator("#tab-hints")).to_have_class(re.compile("has-news"))
    page.get_by_role("button", name="Open the Hints tab").click()
    expect(page.locator("#tab-hints")).to_have_attribute("aria-selected", "true")
    hint_button = page.locator("#get-hint")
    expect(hint_button).to_have_text("Get a hint for edge cases")
    hint_button.focus()
    page.keyboard.press("Enter")
    expect(page.locator(".hint .hint-meta").first).to_have_text(
        "Hint 1 of 4 · concept · answers: edge cases"
    )
    expect(page.locator(".hint .hint-text").first).to_contain_text("exp(1000) is inf")

    # The failed Submit opens the solution, after a confirmation; the diff comes with it.
    page.get_by_role("tab", name="Solution").click()
    page.get_by_role("button", name="Show the solution").click()
    dialog = page.get_by_role("dialog", name="See the solution?")
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Show it").click()
    expect(page.locator("#solution-code")).to_contain_text("def softmax")
    expect(page.locator("#solution-editorial h3").first).to_have_text("Why it is written this way")
    expect(page.locator("#solution-diff tr.diff-changed").first).to_be_visible()
    assert _serious(page) == []
    page.locator("#solution-diff").scroll_into_view_if_needed()
    screenshot(page, "exercise-solution-diff")
    page.emulate_media(color_scheme="dark")
    screenshot(page, "exercise-solution-diff-dark")
    assert _serious(page) == []
    page.emulate_media(color_scheme="light")
    page.set_viewport_size({"width": 390, "height": 844})
    page.locator("#solution-diff").scroll_into_view_if_needed()
    screenshot(page, "exercise-solution-diff-phone")
    # One file at a time on a phone (tests/browser/test_exercise_solution.py): yours first.
    changed = page.locator("#solution-diff tr.diff-changed").first
    expect(changed.locator(".diff-mine")).to_be_visible()
    expect(changed.locator(".diff-ref")).to_be_hidden()
    page.set_viewport_size({"width": 1280, "height": 900})
    page.reload()
    expect(page.locator("#solution-code")).to_contain_text("def softmax")  # kept on reload
    expect(page.locator(".hint")).to_have_count(1)
    expect(editor).to_contain_text("NotImplementedError", timeout=20_000)

    reference = (FOLDER / "reference.py").read_text()
    page.evaluate(
        "code => document.querySelector('article.exercise').backpropEditor.setValue(code)",
        reference,
    )
    page.get_by_role("button", name="Submit").click()
    expect(verdict).to_have_text("Every test passed", timeout=60_000)
    expect(page.locator("#grading-verdict .verdict-facts")).to_contain_text("score 100%")
    expect(page.locator(".test-fail, .test-error")).to_have_count(0)
    screenshot(page, "exercise-passed", full_page=True)

    page.goto("/exercises?status=solved-after-reveal")
    expect(
        page.get_by_role("link", name="Softmax and log-softmax that never overflow")
    ).to_be_visible()
    page.goto("/items/activation-functions")
    drill = page.locator(".item-exercises li", has_text="Softmax and log-softmax")
    expect(drill.locator(".status-pill")).to_have_text("Solved after reveal")


def test_one_submission_graded_on_both_devices_side_by_side(guest: Page) -> None:
    """CPU and GPU rows for one submit where this server offers a GPU. Without one, the
    page says nothing of a GPU: no side-by-side choice, no GPU row, no "GPU: absent"."""
    page = guest
    page.goto("/exercises/stable-softmax")
    expect(page.locator(".cm-content")).to_contain_text("NotImplementedError", timeout=20_000)
    has_gpu = "cuda" in (page.locator("article.exercise").get_attribute("data-backends") or "")
    if not has_gpu:
        expect(page.locator("#exercise-toolbar")).not_to_contain_text("GPU")
        expect(page.locator("#exercise-toolbar")).to_contain_text("on CPU")
        assert page.locator("#both-devices, #device-compare, #gpu-absent").count() == 0
        return
    page.evaluate(
        "code => document.querySelector('article.exercise').backpropEditor.setValue(code)",
        (FOLDER / "reference.py").read_text(),
    )
    page.get_by_label("CPU and GPU side by side").check()
    page.get_by_role("button", name="Submit").click()
    table = page.locator("#device-compare")
    for backend in ("cpu", "cuda"):
        row = table.locator(f'tr[data-backend="{backend}"]')
        expect(row.locator(".verdict-cell")).to_have_text("Passed", timeout=60_000)
        expect(row).to_contain_text("float32: atol")
    screenshot(page, "exercise-both-devices", full_page=True)
    assert _serious(page) == []


def test_every_exercise_page_fits_a_phone(browser: Browser, live_server: str) -> None:
    """A title with one long token ("Multi-head attention equal to nn.MultiheadAttention")
    once widened its page on a phone. Every exercise the list links to is opened, its
    editor loaded, and measured."""
    context = browser.new_context(base_url=live_server, viewport=SIZES["phone"], is_mobile=True)
    page = context.new_page()
    page.goto("/exercises")
    links = page.locator("#results a.item-link")
    paths = [links.nth(i).get_attribute("href") or "" for i in range(links.count())]
    assert len(paths) == len(list(EXERCISES.glob("*/exercise.yml")))

    def editor_loaded(page: Page, path: str) -> None:
        if path != "/exercises":
            expect(page.locator(".cm-content")).to_contain_text("def ", timeout=20_000)

    overflows = pages_wider_than_their_viewport(page, ["/exercises", *paths], editor_loaded)
    context.close()
    assert overflows == {}, f"pages that scroll sideways on a phone, by px: {overflows}"
