"""A coding interview in the browser, as a guest, against the real grader: started from
the Quizzes page, the exercise is solved against the clock with no difficulty and no
solution in sight; the round's submissions go to the round, and ending it shows the verdict
with the difficulty."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta

import pytest
from playwright.sync_api import Browser, Page, expect

from app.settings import PROJECT_ROOT
from tests.browser.conftest import MovableClock, screenshot, sideways_scroll
from tests.browser.test_accessibility import AXE, SIZES, _serious
from tests.support.sandbox_worker import needs_isolation

pytestmark = [pytest.mark.browser, needs_isolation]
EXERCISES = PROJECT_ROOT / "content" / "exercises"


@pytest.fixture
def guest(browser: Browser, live_server: str) -> Iterator[Page]:
    context = browser.new_context(base_url=live_server, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert errors == []


def test_a_coding_interview_from_start_to_verdict(guest: Page) -> None:
    page = guest
    page.goto("/quizzes")
    page.get_by_label("Topic", exact=True).select_option("regularization")
    page.get_by_role("button", name="Start a coding interview").click()
    expect(page.locator("h1")).to_have_text("Coding interview")
    # The server's 20 minutes, counting down.
    expect(page.locator("#quiz-clock-text")).to_have_text(re.compile(r"^(20:00|19:[45]\d)$"))
    article = page.locator("article.exercise")
    slug = article.get_attribute("data-exercise")
    assert slug
    expect(page.locator(".cm-content")).to_contain_text("def ", timeout=20_000)
    assert (
        page.locator("[class*=badge-easy], [class*=badge-medium], [class*=badge-hard]").count() == 0
    )
    assert page.locator("#reveal-solution").count() == 0

    reference = (EXERCISES / slug / "reference.py").read_text()
    page.evaluate(
        "code => document.querySelector('article.exercise').backpropEditor.setValue(code)",
        reference,
    )
    with page.expect_request(lambda r: "/api/coding-rounds/" in r.url and r.method == "POST"):
        page.get_by_role("button", name="Submit").click()
    verdict = page.locator("#grading-verdict .verdict")
    expect(verdict).to_have_text(re.compile(r"\S"), timeout=90_000)
    # On failure, say which test failed and why (the reference should pass them all).
    assert verdict.inner_text() == "Every test passed", page.locator("#grading").inner_text()
    screenshot(page, "coding-round-open", full_page=True)

    page.get_by_role("button", name="I'm done: end the round").click()
    expect(page.locator(".round-verdict .verdict")).to_have_text("Every test passed")
    difficulty = page.locator(".round-verdict .badge")
    assert difficulty.inner_text() in {"Easy", "Medium", "Hard"}
    to_exercise = page.get_by_role("link", name="Open the exercise with your round's code")
    expect(to_exercise).to_be_visible()
    expect(page.get_by_role("link", name="See its solution")).to_be_visible()
    screenshot(page, "coding-round-verdict", full_page=True)


@pytest.mark.parametrize("size", list(SIZES))
def test_no_serious_accessibility_violation_on_a_round(
    browser: Browser, live_server: str, size: str
) -> None:
    """The round while it runs and its verdict, in both themes (axe, serious or worse)."""
    assert AXE.exists(), "run .ci/setup --dev"
    for theme in ("light", "dark"):
        context = browser.new_context(
            base_url=live_server,
            viewport=SIZES[size],
            color_scheme=theme,
            is_mobile=size == "phone",
            bypass_csp=True,  # for axe's own script only
        )
        page = context.new_page()
        page.goto("/quizzes")
        page.get_by_role("button", name="Start a coding interview").click()
        # The starter is loaded. Any exercise may be drawn: not every starter raises
        # NotImplementedError (compile-break-free's works and breaks the graph).
        expect(page.locator(".cm-content")).to_contain_text("def ", timeout=20_000)
        screenshot(page, f"coding-round-{size}-{theme}", full_page=True)
        assert _serious(page) == []
        page.get_by_role("button", name="I'm done: end the round").click()
        expect(page.locator(".round-verdict")).to_contain_text("Nothing was submitted")
        screenshot(page, f"coding-round-verdict-{size}-{theme}", full_page=True)
        assert _serious(page) == []
        context.close()


def test_a_mock_interview_with_its_coding_round_and_follow_up(guest: Page) -> None:
    page = guest
    page.goto("/quizzes")
    form = page.locator("form.quiz-form")
    form.get_by_label("Mock interview: 3 to 10 open prompts", exact=False).check()
    expect(form.get_by_label("Mock interview: end with a coding round")).to_be_checked()
    form.get_by_label("Questions").fill("3")
    form.get_by_label("Normalisation & regularisation").check()
    form.get_by_role("button", name="Start the quiz").click()
    for _ in range(3):
        page.locator("#mock-next").click()
    page.get_by_role("button", name="Start the coding round: the clock starts now").click()
    expect(page.locator("h1")).to_have_text("Mock interview · coding round")
    slug = page.locator("article.exercise").get_attribute("data-exercise")
    assert slug
    expect(page.locator(".cm-content")).to_contain_text("def ", timeout=20_000)
    page.evaluate(
        "code => document.querySelector('article.exercise').backpropEditor.setValue(code)",
        (EXERCISES / slug / "reference.py").read_text(),
    )
    page.get_by_role("button", name="Submit").click()
    expect(page.locator("#grading-verdict .verdict")).to_have_text(
        "Every test passed", timeout=90_000
    )
    page.get_by_role("button", name="I'm done: end the round").click()
    page.get_by_role("link", name="On to the follow-up and grading").click()
    expect(page.locator("#question-title")).to_have_text("Grade your answers")
    followup = page.locator(".mock-followup")
    expect(followup).to_contain_text("Follow-up:")
    followup.locator("input[name=followup]").first.check()
    followup.locator("input[name=followup]").nth(1).check()
    screenshot(page, "mock-coding-grading", full_page=True)
    page.get_by_role("button", name="Grade and finish").click()
    expect(page.locator(".round-verdict .verdict")).to_have_text("Every test passed")
    expect(page.locator(".mock-followup")).to_contain_text("you covered 2 of")
    screenshot(page, "mock-coding-results", full_page=True)


def test_a_long_test_name_fits_a_phone_and_the_round_can_be_ended(
    browser: Browser, live_server: str
) -> None:
    """A visible test named with one long token (pre-ln-transformer-block's
    "nn.TransformerEncoderLayer(norm_first=True)") once widened the round's page on a phone,
    and the zoomed page took the tap meant for "I'm done". Whichever exercise is drawn, its
    first test is given that name here."""
    context = browser.new_context(base_url=live_server, viewport=SIZES["phone"], is_mobile=True)
    page = context.new_page()
    page.goto("/quizzes")
    page.get_by_role("button", name="Start a coding interview").click()
    expect(page.locator(".cm-content")).to_contain_text("def ", timeout=20_000)
    page.locator(".visible-tests li strong").first.evaluate(
        "node => { node.textContent = 'block equals nn.TransformerEncoderLayer(norm_first=True)' }"
    )
    overflow = sideways_scroll(page)
    assert overflow <= 0, f"the round's page scrolls sideways by {overflow}px"
    page.get_by_role("button", name="I'm done: end the round").click()
    expect(page.locator(".round-verdict")).to_be_visible()
    context.close()


def _start_round(page: Page) -> str:
    page.goto("/quizzes")
    page.get_by_label("Topic", exact=True).select_option("regularization")
    page.get_by_role("button", name="Start a coding interview").click()
    slug = page.locator("article.exercise").get_attribute("data-exercise")
    assert slug
    expect(page.locator(".cm-content")).to_contain_text("def ", timeout=20_000)
    return slug


def _type(page: Page, code: str) -> None:
    page.evaluate(
        "code => document.querySelector('article.exercise').backpropEditor.setValue(code)", code
    )


def test_a_round_that_runs_out_grades_the_code_left_in_the_editor(
    guest: Page, clock: MovableClock
) -> None:
    """Ten minutes of code are never thrown away: the clock and its last-minute warning stay
    in view beside the editor, and at zero the code in the editor is submitted and graded
    though the learner never pressed Submit; the exercise page lists it among the round's
    submissions. The browser's clock and the server's are moved on together."""
    page = guest
    page.set_viewport_size({"width": 1366, "height": 900})
    page.clock.install()
    slug = _start_round(page)
    reference = (EXERCISES / slug / "reference.py").read_text().rstrip("\n")
    _type(page, reference)
    left = float(page.locator("#quiz-clock").get_attribute("data-seconds-left") or "0")
    clock.advance(timedelta(seconds=left - 8))
    page.clock.fast_forward(int((left - 8) * 1000))
    # The last seconds: the clock, its warning, the editor and Submit on screen together.
    expect(page.locator("#quiz-clock-warning")).to_be_visible()
    expect(page.locator("#quiz-clock")).to_have_class(re.compile("is-warning"))
    for selector in ("#quiz-clock", ".cm-editor", "#submit-tests"):
        box = page.locator(selector).bounding_box()
        assert box and box["y"] >= 0 and box["y"] + box["height"] <= 900, (selector, box)
    screenshot(page, "coding-round-last-seconds")

    # Zero: the round ends by itself, and the editor's code is its graded result.
    note = page.locator(".round-verdict .round-note, .round-verdict .verdict").first
    expect(note).to_be_visible(timeout=30_000)
    assert "Nothing was submitted" not in note.inner_text(), (
        "the code left in the editor was thrown away at the end of the round"
    )
    verdict = page.locator(".round-verdict .verdict")
    expect(verdict).to_have_text("Every test passed", timeout=90_000)
    expect(page.locator(".round-verdict")).to_contain_text("submitted for you")
    screenshot(page, "coding-round-graded-at-zero")
    page.get_by_role("link", name="Open the exercise with your round's code").click()
    expect(page.locator("#tab-submissions")).to_have_attribute("aria-selected", "true")
    row = page.locator(".submission-row").first
    expect(row).to_contain_text("Coding round")
    expect(row).to_contain_text("Passed")
    row.locator("summary").click()
    row.get_by_role("button", name="Load into the editor").click()
    loaded = page.evaluate("document.querySelector('article.exercise').backpropEditor.getValue()")
    assert loaded == reference


def test_the_code_typed_in_a_round_comes_back_after_a_reload(guest: Page) -> None:
    page = guest
    _start_round(page)
    code = "def typed_in_the_round():\n    return 42"
    with page.expect_response(lambda r: r.url.endswith("/draft") and r.status == 204):
        _type(page, code)
    page.reload()
    expect(page.locator(".cm-content")).to_contain_text("typed_in_the_round", timeout=20_000)
    expect(page.locator("#draft-note")).to_contain_text("kept with this round")
