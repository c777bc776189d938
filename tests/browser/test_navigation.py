"""The main navigation on a phone (390×844): every section within the screen's width, the
review badge visible when something is due, legible in both themes (axe)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from fastapi import FastAPI
from playwright.sync_api import Browser, Page, expect

from app.models import utcnow
from tests.browser.conftest import screenshot, sideways_scroll
from tests.browser.test_accessibility import SIZES, _serious

pytestmark = pytest.mark.browser

SECTIONS = ["Library", "Progress", "Quizzes", "Labs", "Exercises", "Review"]


def answer_one_question(page: Page) -> None:
    """A practice quiz, its first question answered: that question is now a review card."""
    page.goto("/quizzes")
    form = page.locator("form.quiz-form")
    form.get_by_label("Practice: untimed, feedback after each answer").check()
    form.get_by_label("Questions", exact=True).fill("5")
    form.get_by_role("button", name="Start the quiz").click()
    expect(page.locator("#question-title")).to_have_text(re.compile(r"^1\. "))
    page.locator("#question label.choice-option").first.click()
    page.get_by_role("button", name="Lock in the answer").click()
    expect(page.locator("#next-review")).to_be_visible()


def links_outside_the_screen(page: Page, width: int) -> dict[str, tuple[float, float]]:
    """The navigation's links that reach past either side of the screen: left and right."""
    outside = {}
    for link in page.locator("nav.site-nav a").all():
        box = link.bounding_box()
        assert box is not None, f"{link.inner_text()} is not rendered"
        if box["x"] < 0 or box["x"] + box["width"] > width:
            outside[link.inner_text()] = (box["x"], box["x"] + box["width"])
    return outside


def test_every_section_and_the_due_badge_show_on_a_phone(
    browser: Browser, live_server: str, live_app: FastAPI
) -> None:
    phone = SIZES["phone"]
    context = browser.new_context(
        base_url=live_server, viewport=phone, is_mobile=True, bypass_csp=True
    )
    page = context.new_page()
    answer_one_question(page)
    state = live_app.state.backprop
    kept = state.clock
    state.clock = lambda: utcnow() + timedelta(days=60)  # the answered question is due
    try:
        for theme in ("light", "dark"):
            page.emulate_media(color_scheme=theme)
            for path in ("/", "/exercises", "/review"):
                page.goto(path)
                nav = page.get_by_role("navigation", name="Main")
                labels = [a.inner_text().split()[0] for a in nav.locator("a").all()]
                assert labels == SECTIONS
                for link in nav.locator("a").all():
                    expect(link).to_be_visible()
                    expect(link).to_be_in_viewport()
                assert links_outside_the_screen(page, phone["width"]) == {}, path
                badge = nav.locator(".nav-review .badge")
                expect(badge).to_be_visible()
                expect(badge).to_have_text("1 due")
                expect(badge).to_be_in_viewport(ratio=1)
                assert sideways_scroll(page) <= 0
                assert _serious(page) == [], f"{path} {theme}"
            screenshot(page, f"navigation-phone-{theme}")
        # Reached by keyboard too: Tab from the brand runs through the sections in order.
        page.goto("/")
        page.locator("a.brand").focus()
        for name in SECTIONS:
            page.keyboard.press("Tab")
            focused = page.evaluate("document.activeElement.textContent.trim().split(/\\s+/)[0]")
            assert focused == name
    finally:
        state.clock = kept
        context.close()
