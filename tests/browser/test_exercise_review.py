"""Re-solving an exercise in the browser, as a guest, against the real grader: a passing
submit schedules it, its page says when it is next due and the readiness forecast counts
it; once due it is in Review, whose
link opens it from the starter (not the code left in the editor), free of serious
accessibility violations, at phone and desktop size in both themes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from fastapi import FastAPI
from playwright.sync_api import Page, expect

from app.models import utcnow
from app.settings import PROJECT_ROOT
from tests.browser.conftest import screenshot
from tests.browser.test_accessibility import _serious
from tests.support.paths import EXERCISE_COUNT
from tests.support.sandbox_worker import needs_isolation

pytestmark = [pytest.mark.browser, needs_isolation]
SLUG = "stable-softmax"
TITLE = "Softmax and log-softmax that never overflow"
REFERENCE = (PROJECT_ROOT / "content" / "exercises" / SLUG / "reference.py").read_text()


def test_a_solved_exercise_comes_back_in_review_from_the_starter(
    guest: Page, live_app: FastAPI
) -> None:
    page = guest
    page.goto(f"/exercises/{SLUG}")
    editor = page.locator(".cm-content")
    expect(editor).to_contain_text("NotImplementedError", timeout=20_000)
    page.evaluate(
        "code => document.querySelector('article.exercise').backpropEditor.setValue(code)",
        REFERENCE,
    )
    page.get_by_role("button", name="Submit").click()
    expect(page.locator("#grading-verdict .verdict")).to_have_text(
        "Every test passed", timeout=60_000
    )
    page.reload()
    expect(page.locator("#review-due")).to_contain_text("Next review in")
    expect(editor).not_to_contain_text("NotImplementedError")  # the guest's code is kept

    interview = (utcnow() + timedelta(days=20)).date().isoformat()
    page.goto(f"/dashboard?interview={interview}")
    expect(page.locator("#readiness-coding")).to_contain_text(
        f"exercise you have solved, of {EXERCISE_COUNT}"
    )
    readiness = page.get_by_role("region", name="Readiness for an interview")
    expect(readiness.get_by_role("link", name=TITLE)).to_be_visible()
    assert _serious(page) == []
    screenshot(page, "readiness-coding", full_page=True)

    state = live_app.state.backprop
    kept = state.clock
    state.clock = lambda: utcnow() + timedelta(days=30)
    try:
        page.goto("/review")
        expect(page.locator("#due-heading")).to_have_text("Due now: 1 exercise")
        for size in ({"width": 390, "height": 844}, {"width": 1366, "height": 900}):
            page.set_viewport_size(size)
            for theme in ("light", "dark"):
                page.emulate_media(color_scheme=theme)
                screenshot(page, f"review-exercise-{size['width']}-{theme}", full_page=True)
                assert _serious(page) == []
        page.get_by_role("link", name=f"Solve again: {TITLE}").click()
        expect(page).to_have_url(f"{page.url.split('/exercises')[0]}/exercises/{SLUG}?review=1")
        expect(page.locator("#review-note")).to_be_visible()
        expect(editor).to_contain_text("NotImplementedError", timeout=20_000)  # the starter
        assert _serious(page) == []
        screenshot(page, "exercise-review-mode", full_page=True)
        page.goto(f"/exercises/{SLUG}")  # outside review, the guest's own code is back
        expect(editor).not_to_contain_text("NotImplementedError", timeout=20_000)
    finally:
        state.clock = kept
