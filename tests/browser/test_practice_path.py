"""The whole practice path in one browser, as a learner who signed up, against the real
grader: an exercise opened from its item page, a submit that fails one category, the hint
offered for that category, the fix, a passing submit; then its status on the exercise list,
the item page and the dashboard, and, once the card is due, the exercise in Review, whose
link opens it from the starter. Every page on the way is free of serious accessibility
violations and fits a phone's width; each is screenshotted at phone and desktop size in both
themes."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from fastapi import FastAPI
from playwright.sync_api import Page, expect

from app.models import utcnow
from app.settings import PROJECT_ROOT
from tests.browser.conftest import screenshot, sideways_scroll
from tests.browser.test_accessibility import _serious
from tests.browser.test_accounts import fresh_username, sign_up
from tests.support.sandbox_worker import needs_isolation

pytestmark = [pytest.mark.browser, needs_isolation]
SLUG = "stable-softmax"
TITLE = "Softmax and log-softmax that never overflow"
ITEM = "/items/activation-functions"
FOLDER = PROJECT_ROOT / "content" / "exercises" / SLUG
REFERENCE = (FOLDER / "reference.py").read_text()
# Normalises over the last dimension whatever `dim` says (empty inputs still handled): only
# the tests along another dimension fail, and the first of them is in the values category.
WRONG_DIM = REFERENCE.replace("dim=dim", "dim=-1")
SIZES = ({"width": 390, "height": 844}, {"width": 1366, "height": 900})


def room_above_footer(page: Page) -> float:
    """CSS pixels between the lowest thing the page shows and the footer."""
    return float(
        page.evaluate(
            """() => {
                // A workspace fills the window and shows no footer (from 1,200 px wide).
                const footer = document.querySelector(".site-footer");
                if (!footer.checkVisibility()) return 1e9;
                const leaves = [...document.querySelectorAll("main *")]
                  .filter((e) => e.children.length === 0 && e.checkVisibility())
                  .map((e) => e.getBoundingClientRect())
                  .filter((r) => r.width > 0 && r.height > 0);
                const bottom = Math.max(...leaves.map((r) => r.bottom));
                return footer.getBoundingClientRect().top - bottom;
            }"""
        )
    )


def header_spread(page: Page) -> float:
    """How far apart, in CSS pixels, the middles of the header's brand, search and account
    are: a few pixels in one row, a row's height or more when it wraps."""
    middles = page.evaluate(
        """() => [".brand", ".header-search", ".account-nav"].map((s) => {
             const r = document.querySelector(s).getBoundingClientRect();
             return (r.top + r.bottom) / 2;
           })"""
    )
    return float(max(middles) - min(middles))


def each_size_and_theme(page: Page, state: str) -> None:
    """Screenshot the page at each size in each theme, checking each time axe, the page's
    width and its room above the footer; the page is left at desktop size in light."""
    for size in SIZES:
        page.set_viewport_size(size)
        for theme in ("light", "dark"):
            page.emulate_media(color_scheme=theme)
            # From the top: a full-page shot of a scrolled page repeats the sticky header.
            page.evaluate("window.scrollTo(0, 0)")
            screenshot(page, f"practice-path-{state}-{size['width']}-{theme}", full_page=True)
            assert _serious(page) == [], f"{state} at {size['width']} in {theme}"
            assert sideways_scroll(page) <= 0, f"{state} overflows at {size['width']} px"
            assert room_above_footer(page) >= 24, f"{state} touches the footer at {size['width']}"
    page.set_viewport_size(SIZES[1])
    page.emulate_media(color_scheme="light")


def set_code(page: Page, code: str) -> None:
    page.evaluate(
        "code => document.querySelector('article.exercise').backpropEditor.setValue(code)", code
    )


def test_the_practice_path_from_a_failing_submit_to_the_card_in_review(
    guest: Page, live_app: FastAPI
) -> None:
    page = guest
    page.goto("/signup")
    sign_up(page, fresh_username("path"))
    expect(page.locator(".site-header .account-link")).to_be_visible()

    # The item page lists the exercise, not tried yet; its link opens it.
    page.goto(ITEM)
    drill = page.locator(".item-exercises li", has_text=TITLE)
    expect(drill.locator(".status-pill")).to_have_text("Not tried")
    drill.get_by_role("link", name=TITLE).click()
    expect(page).to_have_url(re.compile(rf"/exercises/{SLUG}$"))
    editor = page.locator(".cm-content")
    expect(editor).to_contain_text("NotImplementedError", timeout=20_000)

    # A submit that fails the values category: its group is the one opened.
    set_code(page, WRONG_DIM)
    page.get_by_role("button", name="Submit").click()
    verdict = page.locator("#grading-verdict .verdict")
    expect(verdict).to_have_text("Some tests failed", timeout=60_000)
    opened = page.locator("details.test-group[open]")
    expect(opened).to_have_count(1)
    expect(opened.locator(".group-name")).to_have_text("values")
    expect(
        page.locator("details.test-group", has_text="edge cases").locator(".test-fail")
    ).to_have_count(0)

    # The hint offered answers that category: the results point to it, and the panel says so.
    expect(page.locator("#hint-nudge")).to_contain_text("the failing values test")
    page.get_by_role("button", name="Open the Hints tab").click()
    hint_button = page.locator("#get-hint")
    expect(hint_button).to_have_text("Get a hint for values")
    hint_button.click()
    hint = page.locator("#hint-list .hint").first
    expect(hint.locator(".hint-meta")).to_have_text("Hint 1 of 4 · approach · answers: values")
    expect(hint.locator(".hint-text")).to_contain_text("keepdim=True")
    each_size_and_theme(page, "hint")

    # The fix passes every test.
    set_code(page, REFERENCE)
    page.get_by_role("button", name="Submit").click()
    expect(verdict).to_have_text("Every test passed", timeout=60_000)
    expect(page.locator(".test-fail, .test-error")).to_have_count(0)
    expect(page.locator("#hint-list .hint")).to_have_count(1)  # the hint stays in view
    each_size_and_theme(page, "passed")
    page.reload()
    due_note = page.locator("#review-due")
    expect(due_note).to_contain_text("Solved. Next review in")
    days = int(re.search(r"Next review in (\d+) day", due_note.inner_text()).group(1))  # type: ignore[union-attr]

    # Its status, on the list and the item page.
    page.goto("/exercises?status=solved-with-hints")
    row = page.locator(".item-row", has_text=TITLE)
    expect(row.locator(".status-pill")).to_have_text("Solved with hints")
    page.goto(ITEM)
    expect(drill.locator(".status-pill")).to_have_text("Solved with hints")
    each_size_and_theme(page, "item")

    # The dashboard counts it among its topic's exercises solved.
    page.goto("/dashboard")
    topic = page.locator(".bar-row", has=page.locator('a[href="/exercises?topic=foundations"]'))
    expect(topic.locator(".bar-count")).to_have_text(re.compile(r"^1 / \d+$"))
    expect(topic.locator(".bar")).to_have_attribute(
        "aria-label", re.compile(r": 1 of \d+ exercises solved$")
    )
    # Recent runs name the two submits by their exercise, with the grader's verdicts.
    submits = page.locator(".runs-table tbody tr", has=page.get_by_role("link", name=TITLE))
    expect(submits).to_have_count(2)
    expect(submits.locator(".verdict")).to_have_text(["passed", "failed"])  # newest first
    expect(submits.first).to_contain_text("· submit")
    each_size_and_theme(page, "dashboard")

    # Once the card is due, Review lists it; its link opens the exercise from the starter,
    # though the account keeps the passing code.
    state = live_app.state.backprop
    kept = state.clock
    state.clock = lambda: utcnow() + timedelta(days=days + 1)
    try:
        page.goto("/review")
        expect(page.locator("#due-heading")).to_have_text("Due now: 1 exercise")
        each_size_and_theme(page, "review")
        # With the Review badge and a long name, the laptop's header still keeps to one row.
        assert header_spread(page) < 10
        page.get_by_role("link", name=f"Solve again: {TITLE}").click()
        expect(page).to_have_url(re.compile(rf"/exercises/{SLUG}\?review=1$"))
        expect(page.locator("#review-note")).to_be_visible()
        expect(editor).to_contain_text("NotImplementedError", timeout=20_000)
        assert _serious(page) == []
    finally:
        state.clock = kept
