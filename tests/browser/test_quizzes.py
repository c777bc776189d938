"""Quizzes, open-answer practice and spaced review in a real browser: a timed quiz taken
with the keyboard until its clock runs out, practice that explains each answer at once, an
open answer on an item's page, the questions that come back for review, and how these pages
look in both themes at desktop and phone size.

The server owns the clock (app.state.backprop.clock). The `clock` fixture swaps in one that
runs at real speed but can be moved forward, and puts the real one back afterwards; every
test is a fresh guest, so a moved clock never reaches another test's data."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Literal

import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    Locator,
    Page,
    StorageState,
    ViewportSize,
    expect,
)

from tests.browser.conftest import MovableClock, screenshot, sideways_scroll

pytestmark = pytest.mark.browser

QUIZ_URL = re.compile(r"/quizzes/[0-9a-f]{32}$")
DROPOUT_PROMPT = "Why does inverted Dropout scale surviving activations"
SLOW_MS = 20_000  # a page the shared two-core machine may be slow to send


def watch_console(page: Page) -> list[str]:
    """The console errors the page logs from now on (for pages the `page` fixture did not make)."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return errors


def question(page: Page) -> Locator:
    return page.locator("#question")


def question_title(page: Page) -> Locator:
    return page.locator("#question-title")


def start_quiz(page: Page, *, mode: str, count: int = 5, minutes: int = 5) -> None:
    """Fill the form on /quizzes for the deep-learning deck and start."""
    page.goto("/quizzes")
    form = page.locator("form.quiz-form")
    label = (
        "Timed: answers and explanations at the end"
        if mode == "timed"
        else ("Practice: untimed, feedback after each answer")
    )
    form.get_by_label(label).check()
    form.get_by_label("Deck", exact=True).select_option("deep-learning")
    form.get_by_label("Questions", exact=True).fill(str(count))
    form.get_by_label("Time limit (timed)").select_option(str(minutes))
    form.get_by_role("button", name="Start the quiz").click()
    expect(page).to_have_url(QUIZ_URL)
    expect(question_title(page)).to_have_text(re.compile(r"^1\. "))


def answer_by_keyboard(page: Page, position: int, key: int) -> None:
    """Choose with a number key and lock in with Enter, on the question at `position`."""
    expect(question_title(page)).to_have_text(re.compile(rf"^{position}\. "))
    expect(page.locator("html")).to_have_attribute("data-quiz", "ready")  # quiz.js listens
    page.keyboard.press(str(key))
    radio = question(page).locator(f'input[type=radio][data-key="{key}"]')
    expect(radio).to_be_checked()
    expect(radio).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#question .quiz-progress")).to_contain_text(f"{position} of ")


def answer_open_prompt(page: Page, ticks: int) -> Locator:
    """On an item's page: type an answer to the first prompt, reveal the model answer, tick
    the first `ticks` key points and record; the first prompt's entry, after the swap."""
    first = page.locator("#study .recall").first
    box = first.locator("textarea.open-answer")
    # Typing j and k in the box must not move to another item (the page's shortcuts).
    box.press_sequentially("jk: survivors are scaled so the expectation is kept", delay=10)
    expect(page).to_have_url(re.compile(r"/items/dropout(#.*)?$"))
    expect(box).to_have_value(re.compile(r"^jk: survivors"))
    record = first.get_by_role("button", name="Record how I did")
    expect(record).to_be_hidden()
    first.get_by_text("Reveal the model answer").click()
    expect(first.locator(".model-answer")).to_contain_text("1 − p")
    points = first.locator(".key-points input[type=checkbox]")
    expect(points).to_have_count(4)
    for n in range(ticks):
        points.nth(n).check()
    record.click()
    return page.locator("#study .recall").first


def test_timed_quiz_by_keyboard_until_the_clock_runs_out(page: Page, clock: MovableClock) -> None:
    # The browser's clock and the server's are moved on together: on a busy machine, real
    # seconds before the deadline can pass before the reloaded page has been read.
    page.clock.install()
    start_quiz(page, mode="timed", count=5, minutes=5)
    expect(page.get_by_role("heading", level=1)).to_have_text("Timed quiz · 5 questions")
    expect(page.locator("#quiz-clock-text")).to_have_text(re.compile(r"^[45]:\d\d$"))
    expect(page.locator("#quiz-clock")).not_to_have_class(re.compile("is-warning"))
    # Timed: locking in moves straight on, nothing about the answer is shown.
    for position, key in ((1, 1), (2, 2), (3, 3), (4, 4)):
        answer_by_keyboard(page, position, key)
        expect(page.locator(".quiz-verdict")).to_have_count(0)
        expect(page.locator("#question .choice-why")).to_have_count(0)
    expect(question_title(page)).to_have_text(re.compile(r"^5\. "))
    expect(page.locator("#question .quiz-progress")).to_have_text("4 of 5 answered")

    # Move the server's clock to half a minute before the deadline; a reload shows it.
    left = float(page.locator("#quiz-clock").get_attribute("data-seconds-left") or "nan")
    assert 200 < left <= 300
    clock.advance(timedelta(seconds=left - 30))
    page.reload()
    left = float(page.locator("#quiz-clock").get_attribute("data-seconds-left") or "nan")
    assert 0 < left <= 30
    expect(page.locator("#quiz-clock")).to_have_class(re.compile("is-warning"))
    expect(page.locator("#quiz-clock-announce")).to_have_text("One minute left.")
    expect(question_title(page)).to_have_text(re.compile(r"^5\. "))
    page.keyboard.press("2")  # chosen, never locked in: it does not count
    with page.expect_request(
        lambda r: r.method == "POST" and r.url.endswith("/submit"), timeout=SLOW_MS
    ) as submitted:
        clock.advance(timedelta(seconds=31))
        page.clock.fast_forward(31_000)
    # The countdown reached zero and the page sent the finish form by itself.
    assert submitted.value.url.endswith("/submit")

    score = page.locator(".quiz-score")
    expect(score).to_contain_text("time ran out", timeout=SLOW_MS)
    expect(page).to_have_url(QUIZ_URL)
    expect(page).to_have_title(re.compile(r"^Results: Timed quiz"))
    results = page.locator(".result-list > .result")
    expect(results).to_have_count(5)
    right = page.locator(".result-list > .result.is-right").count()
    expect(score).to_contain_text(f"{right} / 5")
    for n in range(4):
        expect(results.nth(n).locator(":scope > p.muted")).to_contain_text(
            re.compile(rf"(Right|Wrong): you chose {'ABCD'[n]}")
        )
    expect(results.nth(4).locator(":scope > p.muted")).to_contain_text("Not answered")
    for n in range(5):
        result = results.nth(n)
        expect(result.locator(".badge-key")).to_have_count(1)
        expect(result.locator(".badge-key")).to_have_text("Answer")
        choices = result.locator(".choice").count()
        assert choices >= 2
        expect(result.locator(".choice-why")).to_have_count(choices)
        expect(result.locator(".choice-why").first).not_to_be_empty()
        expect(result.locator('a[href^="/items/"]')).to_have_count(1)
    screenshot(page, "quiz-time-ran-out", full_page=True)

    # The links go to the items; the list of quizzes has this one, scored.
    link = results.first.locator('a[href^="/items/"]')
    title = link.inner_text()
    link.click()
    expect(page).to_have_url(re.compile(r"/items/[a-z0-9-]+$"))
    expect(page.get_by_role("heading", level=1)).to_contain_text(title)
    page.goto("/quizzes")
    expect(page.locator(".runs-table tbody tr").first).to_contain_text(f"{right} / 5")


def test_practice_explains_each_answer_at_once(page: Page) -> None:
    start_quiz(page, mode="practice", count=5)
    expect(page.get_by_role("heading", level=1)).to_have_text("Practice · 5 questions")
    expect(page.locator("#quiz-clock")).to_have_count(0)  # untimed
    first_prompt = question_title(page).inner_text()
    page.evaluate("window.__samePage = true")
    answer_by_keyboard(page, 1, 1)

    # The same question comes back explained: the verdict, every option's why, the key.
    expect(question_title(page)).to_have_text(first_prompt)
    expect(page.locator("#question .quiz-verdict")).to_have_text(
        re.compile(r"^(Right|Not quite)\.$")
    )
    choices = page.locator("#question .choice-list .choice")
    count = choices.count()
    assert count >= 2
    expect(page.locator("#question .choice-why")).to_have_count(count)
    for n in range(count):
        expect(choices.nth(n).locator(".choice-why")).not_to_be_empty()
    key = page.locator("#question .choice.is-key")
    expect(key).to_have_count(1)
    expect(key.locator(".badge-key")).to_have_text("Answer")
    mine = page.locator("#question .choice.is-mine")
    expect(mine.locator("strong")).to_have_text("A.")
    expect(mine).to_contain_text("Yours")
    verdict = "Right." if "is-key" in (mine.get_attribute("class") or "") else "Not quite."
    expect(page.locator("#question .quiz-verdict")).to_have_text(verdict)
    expect(page.locator("#question .quiz-progress")).to_have_text("1 of 5 answered")
    expect(question(page).get_by_role("link", name="Read the item")).to_have_attribute(
        "href", re.compile(r"^/items/[a-z0-9-]+$")
    )
    expect(question_title(page)).to_be_focused()  # focus followed the swap

    # n: the next question, unanswered, swapped in without reloading the page.
    page.keyboard.press("n")
    expect(question_title(page)).to_have_text(re.compile(r"^2\. "))
    expect(page.locator("#question input[type=radio]").first).to_be_visible()
    expect(page.locator("#question .quiz-verdict")).to_have_count(0)
    expect(page.locator("#question .choice-why")).to_have_count(0)
    assert page.evaluate("window.__samePage") is True, "the next question reloaded the page"
    answer_by_keyboard(page, 2, 3)
    expect(page.locator("#question .choice.is-mine strong")).to_have_text("C.")


def test_open_answer_practice_on_an_item_page(page: Page) -> None:
    page.goto("/items/dropout")
    first = page.locator("#study .recall").first
    expect(first.locator(".recall-prompt")).to_contain_text(DROPOUT_PROMPT)
    expect(first.locator(".recall-last")).to_have_text("Not answered yet")
    page.evaluate("window.__samePage = true")
    first = answer_open_prompt(page, ticks=3)  # three of four key points: most of it
    expect(first.locator(".recall-last")).to_have_text("Last time: you covered most of it")
    assert page.evaluate("window.__samePage") is True, "recording reloaded the page"
    page.reload()
    first = page.locator("#study .recall").first
    expect(first.locator(".recall-last")).to_have_text("Last time: you covered most of it")
    expect(first.locator(".open-reveal")).not_to_have_attribute("open", "")


def test_questions_due_for_review(page: Page, clock: MovableClock) -> None:
    page.goto("/items/dropout")
    review_link = page.locator(".site-header .nav-review")
    expect(review_link).to_have_count(0)
    first = answer_open_prompt(page, ticks=0)  # nothing covered: Again, back in a minute
    expect(first.locator(".recall-last")).to_have_text("Last time: not yet")
    page.goto("/items")
    expect(page.locator(".item-row").first).to_be_visible()
    expect(review_link).to_have_count(0)  # not due yet

    clock.advance(timedelta(hours=1))
    page.goto("/items")
    expect(review_link).to_have_text(re.compile(r"^Review\s+1 due$"))
    review_link.click()
    expect(page).to_have_url(re.compile(r"/review$"))
    expect(review_link).to_have_attribute("aria-current", "page")
    due = page.locator(".review .review-queue li")
    expect(due).to_have_count(1)
    expect(due).to_contain_text(DROPOUT_PROMPT)
    expect(due.get_by_role("link")).to_have_attribute("href", "/items/dropout")

    page.get_by_role("button", name="Review 1 question now").click()
    expect(page).to_have_url(QUIZ_URL)
    expect(page.get_by_role("heading", level=1)).to_have_text("Review · 1 question")
    expect(page.locator("#quiz-clock")).to_have_count(0)
    expect(question_title(page)).to_contain_text(DROPOUT_PROMPT)
    answer_by_keyboard(page, 1, 2)
    # Review explains each answer, as practice does.
    expect(page.locator("#question .quiz-verdict")).to_be_visible()
    expect(page.locator("#question .choice-why")).to_have_count(4)
    expect(page.locator("#question .choice.is-key .badge-key")).to_have_text("Answer")
    expect(page.locator("#question .quiz-progress")).to_have_text("1 of 1 answered")
    # Answered, it is scheduled again and no longer due now.
    page.keyboard.press("n")
    expect(question_title(page)).to_have_text("Every question is answered.")
    page.reload()
    expect(question_title(page)).to_have_text("Every question is answered.")
    expect(review_link).to_have_count(0)


SCROLL_CLEAR_OF_HEADER = """e => {
  const header = document.querySelector('.site-header');
  const sticky = getComputedStyle(header).position === 'sticky' ? header.offsetHeight : 0;
  window.scrollTo(0, e.getBoundingClientRect().top + window.scrollY - sticky - 12);
}"""
SIZES: dict[str, ViewportSize] = {
    "desktop": {"width": 1366, "height": 900},
    "phone": {"width": 390, "height": 844},
}


def _prepared_guest(
    browser: Browser, live_server: str, clock: MovableClock
) -> tuple[StorageState, str, str]:
    """A guest with a finished quiz, a timed quiz in progress and a question due for review:
    (their browser storage, the results' address, the quiz in progress' address)."""
    context = browser.new_context(base_url=live_server, viewport=SIZES["desktop"])
    page = context.new_page()
    errors = watch_console(page)
    page.goto("/items/dropout")
    answer_open_prompt(page, ticks=0)
    expect(page.locator("#study .recall").first.locator(".recall-last")).to_have_text(
        "Last time: not yet"
    )
    start_quiz(page, mode="timed", count=5, minutes=10)
    for position, key in ((1, 1), (2, 2), (3, 3)):
        answer_by_keyboard(page, position, key)
    page.get_by_role("button", name="Finish now and see the results").click()
    expect(page.locator(".quiz-score")).to_contain_text("/ 5")
    expect(page.locator(".quiz-score")).not_to_contain_text("time ran out")
    results = page.url
    clock.advance(timedelta(hours=1))  # the open answer is now due
    start_quiz(page, mode="timed", count=5, minutes=10)
    in_progress = page.url
    storage = context.storage_state()
    context.close()
    assert errors == [], f"console errors: {errors}"
    return storage, results, in_progress


def _no_sideways_scroll(page: Page, what: str) -> None:
    overflow = sideways_scroll(page)
    assert overflow <= 0, f"{what} scrolls sideways by {overflow}px"


def test_quiz_pages_in_both_themes_at_desktop_and_phone_size(
    browser: Browser, live_server: str, clock: MovableClock
) -> None:
    storage, results, in_progress = _prepared_guest(browser, live_server, clock)
    themes: tuple[Literal["light", "dark"], ...] = ("light", "dark")
    for theme in themes:
        for size, viewport in SIZES.items():
            context: BrowserContext = browser.new_context(
                base_url=live_server,
                storage_state=storage,
                viewport=viewport,
                is_mobile=size == "phone",
                color_scheme=theme,
            )
            page = context.new_page()
            errors = watch_console(page)
            suffix = f"{theme}-{size}"

            page.goto("/quizzes")
            expect(page.locator(".runs-table tbody tr")).to_have_count(2)
            background = page.evaluate("getComputedStyle(document.body).backgroundColor")
            assert (background == "rgb(15, 17, 23)") == (theme == "dark"), background
            _no_sideways_scroll(page, f"/quizzes ({suffix})")
            screenshot(page, f"quiz-setup-{suffix}")

            page.goto(in_progress)
            expect(question_title(page)).to_have_text(re.compile(r"^1\. "))
            expect(page.locator("#quiz-clock-text")).to_have_text(re.compile(r"^(9|10):\d\d$"))
            page.keyboard.press("2")
            expect(page.locator('#question input[data-key="2"]')).to_be_checked()
            page.evaluate("window.scrollTo(0, 0)")  # choosing focused the radio, scrolling
            _no_sideways_scroll(page, f"the quiz in progress ({suffix})")
            screenshot(page, f"quiz-question-{suffix}")

            page.goto(results)
            expect(page.locator(".result-list > .result")).to_have_count(5)
            _no_sideways_scroll(page, f"the results ({suffix})")
            screenshot(page, f"quiz-results-{suffix}", full_page=True)

            page.goto("/review")
            # Due: the open answer, and the quiz's answers (each scheduled within the hour).
            due = page.locator(".review .review-queue li")
            expect(due.first).to_be_visible()
            expect(page.locator(".site-header .nav-review .badge")).to_have_text(
                f"{due.count()} due"
            )
            _no_sideways_scroll(page, f"/review ({suffix})")
            screenshot(page, f"review-{suffix}")

            page.goto("/items/dropout")
            study = page.locator("#study")
            study.locator(".recall").first.get_by_text("Reveal the model answer").click()
            study.locator(".key-points input[type=checkbox]").first.check()
            # Scrolled to the section, clear of the header where it is sticky (desktop).
            page.locator("#study-title").evaluate(SCROLL_CLEAR_OF_HEADER)
            _no_sideways_scroll(page, f"/items/dropout ({suffix})")
            screenshot(page, f"item-open-answer-{suffix}")

            context.close()
            assert errors == [], f"console errors ({suffix}): {errors}"
