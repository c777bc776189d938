"""Accounts and progress in a real browser: sign up, keep progress (visits, a bookmark, a
note, a run) across signing out and in, see it on the dashboard, and bring a guest's
progress into a new account.

The live server is shared by the whole session and allows 10 sign-ups per client per hour,
so every test uses its own fresh username and this file signs up four times at most."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Locator, Page, Route, expect

from tests.browser.conftest import screenshot
from tests.support.sandbox_worker import needs_isolation

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"
DROPOUT = "How does Dropout work mathematically"
BATCH_NORM = "How does Batch Normalization work mathematically"
RUN_TIMEOUT_MS = 60_000


def fresh_username(label: str) -> str:
    return f"{label}-{uuid.uuid4().hex[:10]}"


def sign_up(page: Page, username: str, password: str = PASSWORD) -> None:
    """Fill and send the sign-up form the page is on, and go on past the recovery codes."""
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Create account").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Save your recovery codes")
    expect(page.get_by_role("list", name="Recovery codes").locator("li")).to_have_count(10)
    page.get_by_role("link", name="I have saved them: continue").click()


def sign_in(page: Page, username: str, password: str = PASSWORD) -> None:
    page.goto("/signin")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


def header(page: Page) -> Locator:
    return page.locator(".site-header")


def expect_signed_in_as(page: Page, username: str) -> None:
    expect(header(page).locator(".account-link")).to_have_text(username)
    expect(header(page).get_by_role("button", name="Sign out")).to_be_visible()
    expect(header(page).get_by_role("link", name="Sign in")).to_have_count(0)


def expect_signed_out(page: Page) -> None:
    expect(header(page).get_by_role("link", name="Sign in")).to_be_visible()
    expect(header(page).get_by_role("link", name="Sign up")).to_be_visible()
    expect(header(page).locator(".account-link")).to_have_count(0)


def bookmark_button(page: Page) -> Locator:
    return page.locator("#item-status .bookmark-btn")


def bookmark_this_item(page: Page) -> None:
    """Press Bookmark; htmx swaps its form in place, the page itself is not reloaded."""
    page.evaluate("window.__samePage = true")
    button = bookmark_button(page)
    expect(button).to_have_attribute("aria-pressed", "false")
    expect(button).to_have_text("Bookmark")
    url = page.url
    button.click()
    expect(bookmark_button(page)).to_have_text("Bookmarked")
    expect(bookmark_button(page)).to_have_attribute("aria-pressed", "true")
    assert page.url == url
    assert page.evaluate("window.__samePage") is True, "bookmarking reloaded the page"
    # The swap replaced the button that was pressed; focus moves to its replacement.
    expect(bookmark_button(page)).to_be_focused()


def stat(page: Page, label: str) -> Locator:
    """The number on the dashboard's summary card with this label."""
    card = page.locator(".stat-grid .stat").filter(
        has=page.locator(".stat-label", has_text=re.compile(f"^{label}$"))
    )
    return card.locator(".stat-value")


def bookmarks_list(page: Page) -> Locator:
    return page.locator("#bookmarks-title + ul.link-list li")


def notes_list(page: Page) -> Locator:
    return page.locator("h2.section-title:text-is('Notes') + ul.link-list li")


def practised_days(page: Page) -> Locator:
    return page.locator(
        ".calendar-svg rect.cal-1, .calendar-svg rect.cal-2, "
        ".calendar-svg rect.cal-3, .calendar-svg rect.cal-4"
    )


@pytest.fixture(scope="module")
def account(browser: Browser, live_server: str) -> Iterator[str]:
    """An account made once for the tests that only need one to sign in to (one sign-up)."""
    username = fresh_username("shared")
    context = browser.new_context(base_url=live_server)
    page = context.new_page()
    page.goto("/signup")
    sign_up(page, username)
    expect(page).to_have_url(re.compile(r"/dashboard$"))
    page.get_by_role("button", name="Sign out").click()
    expect_signed_out(page)
    context.close()
    yield username


@needs_isolation  # runs a code sample: needs the sandbox worker
def test_progress_is_kept_in_the_account_across_signing_out_and_in(page: Page) -> None:
    username = fresh_username("journey")

    # Sign up: the form sends you on to the dashboard, empty for a new account.
    page.goto("/signup")
    expect(page.get_by_role("heading", level=1)).to_have_text("Create your account")
    sign_up(page, username)
    expect(page).to_have_url(re.compile(r"/dashboard$"))
    expect_signed_in_as(page, username)
    expect(page.locator(".empty-state")).to_contain_text("Nothing here yet.")
    expect(stat(page, "Seen")).to_have_text("0")
    expect(stat(page, "Practising")).to_have_text("0")
    expect(bookmarks_list(page)).to_have_count(0)

    # Open two items; bookmark the second, without the page reloading.
    page.goto("/items/dropout")
    expect(page.get_by_role("heading", level=1)).to_contain_text(DROPOUT)
    expect(page.locator("#item-status .status-pill")).to_have_text("Seen")
    page.goto("/items/batch-normalization")
    expect(page.get_by_role("heading", level=1)).to_contain_text(BATCH_NORM)
    bookmark_this_item(page)

    # A note on Dropout: Markdown renders, HTML typed in it stays text and never runs.
    page.goto("/items/dropout")
    page.locator("#note-text").fill(
        "Remember the **bold** part: scale by 1/(1-p).\n\n<script>window.__noteRan = true</script>"
    )
    page.locator("#study").get_by_role("button", name="Save note").click()
    rendered = page.locator("#study .note-rendered")
    expect(rendered.locator("strong")).to_have_text("bold")
    expect(rendered).to_contain_text("<script>window.__noteRan = true</script>")
    assert rendered.locator("script").count() == 0
    assert page.evaluate("window.__noteRan") is None
    expect(page.locator("#study").get_by_role("button", name="Update note")).to_be_visible()

    # Run Dropout's first sample on the CPU: practice, so the item becomes "Practising".
    figure = page.locator("figure.sample").first
    expect(figure.locator(".cm-content")).to_be_visible()
    picker = figure.locator("select.backend-picker")
    if picker.locator("option[value='cpu']").count():
        picker.select_option("cpu")
    figure.get_by_role("button", name="Run").click()
    expect(figure.locator(".verdict")).to_have_text("Finished", timeout=RUN_TIMEOUT_MS)
    page.reload()
    expect(page.locator("#item-status .status-pill")).to_have_text("Practising")
    # The reload brings back the saved note, rendered, and its text in the box.
    expect(page.locator("#study .note-rendered strong")).to_have_text("bold")
    expect(page.locator("#note-text")).to_have_value(re.compile(r"\*\*bold\*\*"))

    # Sign out: it is confirmed, the header offers signing in again, and the dashboard
    # knows nobody.
    header(page).get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(re.compile(r"/\?done=signed-out$"))
    expect(page.get_by_role("status").filter(has_text="You are signed out")).to_be_visible()
    expect_signed_out(page)
    page.goto("/dashboard")
    expect(page.locator(".notice")).to_contain_text("You are not signed in.")
    expect(bookmarks_list(page)).to_have_count(0)

    # Sign in again: everything is still there.
    sign_in(page, username)
    expect(page).to_have_url(re.compile(r"/dashboard$"))
    expect_signed_in_as(page, username)
    expect(page.locator(".empty-state")).to_have_count(0)
    expect(stat(page, "Practising")).to_have_text("1")  # Dropout: its code ran
    expect(stat(page, "Seen")).to_have_text("1")  # Batch normalization: only read
    expect(stat(page, "Mastered")).to_have_text("0")
    expect(bookmarks_list(page)).to_have_count(1)
    expect(bookmarks_list(page).first).to_contain_text(BATCH_NORM)
    expect(notes_list(page)).to_have_count(1)
    expect(notes_list(page).first).to_contain_text(DROPOUT)
    expect(notes_list(page).first.locator("a")).to_have_attribute("href", "/items/dropout#study")
    runs = page.locator(".runs-table tbody tr")
    expect(runs).to_have_count(1)
    expect(runs.first).to_contain_text("How does Dropout work")
    expect(runs.first.locator(".verdict")).to_have_text("ok")
    expect(runs.first).to_contain_text("CPU")
    expect(practised_days(page)).not_to_have_count(0)
    expect(page.locator(".stat-streak .stat-value")).to_have_text("1")  # a run is practice
    expect(page.locator(".stat-streak .stat-label")).to_have_text("day streak")
    page.locator("#runs-title").scroll_into_view_if_needed()
    screenshot(page, "dashboard-runs")

    # The library's progress filter lists exactly the bookmarked item.
    page.goto("/items?progress=bookmarked")
    rows = page.locator(".item-row")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(BATCH_NORM)


def test_screenshots_of_sign_up_item_progress_and_dashboard_in_both_themes(page: Page) -> None:
    username = fresh_username("shots")
    page.goto("/signup")
    page.get_by_label("Username").fill(username)
    screenshot(page, "signup")
    sign_up(page, username)
    expect(page).to_have_url(re.compile(r"/dashboard$"))

    # Some progress without running code: read two items, bookmark one, check its prompts.
    page.goto("/items/batch-normalization")
    page.goto("/items/dropout")
    bookmark_this_item(page)
    # Open-answer practice: answer, reveal the model answer, tick the key points covered.
    first = page.locator("#study .recall").nth(0)
    first.locator("textarea").fill("Scale at training time, so inference needs no change.")
    first.get_by_text("Reveal the model answer").click()
    boxes = first.locator(".key-points input[type=checkbox]")
    for n in range(boxes.count()):
        boxes.nth(n).check()
    first.get_by_role("button", name="Record how I did").click()
    expect(page.locator("#study .recall").nth(0).locator(".recall-last")).to_have_text(
        "Last time: you covered most of it"
    )
    expect(page.locator("#item-status .status-pill")).to_have_text("Practising")  # oob swap
    second = page.locator("#study .recall").nth(1)
    second.get_by_text("Reveal the model answer").click()
    second.get_by_role("button", name="Record how I did").click()
    expect(page.locator("#study .recall").nth(1).locator(".recall-last")).to_have_text(
        "Last time: not yet"
    )
    page.locator("#note-text").fill("- inverted dropout: **scale at train time**\n- `p=0.5`")
    page.locator("#study").get_by_role("button", name="Save note").click()
    expect(page.locator("#study .note-rendered li")).to_have_count(2)
    page.evaluate("window.scrollTo(0, 0)")
    screenshot(page, "item-progress")
    page.locator("#study").scroll_into_view_if_needed()
    screenshot(page, "item-study")

    page.goto("/dashboard")
    expect(stat(page, "Practising")).to_have_text("1")
    expect(practised_days(page)).not_to_have_count(0)
    expect(page.locator(".stat-streak .stat-value")).to_have_text("1")  # checks are practice
    screenshot(page, "dashboard-light", full_page=True)
    html = page.locator("html")
    page.locator("#theme-toggle").click()
    expect(html).to_have_attribute("data-theme", "dark")
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(15, 17, 23)"
    screenshot(page, "dashboard-dark", full_page=True)


def test_a_guests_bookmark_comes_into_the_new_account(page: Page) -> None:
    page.goto("/items/dropout")
    expect_signed_out(page)
    bookmark_this_item(page)  # the first visit's answer may come before or after this
    page.goto("/dashboard")
    expect(bookmarks_list(page)).to_have_count(1)  # kept for the guest, in this browser

    # The header's Sign up link comes back to the item after signing up.
    page.goto("/items/dropout")
    header(page).get_by_role("link", name="Sign up").click()
    expect(page).to_have_url(re.compile(r"/signup\?next=(/|%2F)items(/|%2F)dropout$"))
    username = fresh_username("guest")
    sign_up(page, username)
    expect(page).to_have_url(re.compile(r"/items/dropout$"))
    expect_signed_in_as(page, username)
    expect(bookmark_button(page)).to_have_text("Bookmarked")
    page.goto("/dashboard")
    expect(bookmarks_list(page)).to_have_count(1)
    expect(bookmarks_list(page).first).to_contain_text(DROPOUT)


def test_a_bookmark_pressed_before_the_first_visit_is_recorded_stays(page: Page) -> None:
    """A guest's first page records its visit once loaded. Its answer is held here until the
    bookmark's has landed, the order a busy server can give; it used to replace the whole
    status, bookmark button included, and the button read "Bookmark" again."""
    held: list[Route] = []

    def hold(route: Route) -> None:
        held.append(route)

    page.route("**/items/batch-normalization/visit", hold)
    page.goto("/items/batch-normalization")
    for _ in range(200):  # the page asks once it has loaded
        if held:
            break
        page.wait_for_timeout(50)  # lets Playwright call the route's handler
    assert len(held) == 1, "the page never asked to record its visit"
    expect(page.locator("#item-status .visit-note")).to_have_count(0)
    bookmark_this_item(page)
    held[0].continue_()
    expect(page.locator("#item-status .visit-note")).to_have_text(re.compile(r"^Opened 1 time,"))
    expect(page.locator("#item-status-pill")).to_have_class(re.compile(r"\bstatus-seen\b"))
    expect(bookmark_button(page)).to_have_text("Bookmarked")
    screenshot(page, "item-status-after-an-early-bookmark")
    page.reload()
    expect(bookmark_button(page)).to_have_text("Bookmarked")


@pytest.mark.console_errors_expected  # Chromium logs the 401 the refused form comes back with
def test_a_wrong_password_is_refused_with_a_clear_message(page: Page, account: str) -> None:
    sign_in(page, account, "not the right password")
    alert = page.get_by_role("alert")
    expect(alert).to_have_text("That username and password do not match an account.")
    expect(page.get_by_role("heading", level=1)).to_have_text("Sign in")
    expect(page.get_by_label("Username")).to_have_value(account)  # kept, to fix the password
    expect(page.get_by_label("Password")).to_have_value("")
    expect_signed_out(page)
    screenshot(page, "signin-error")
    page.goto("/dashboard")
    expect(page.locator(".notice")).to_contain_text("You are not signed in.")


def test_sign_in_with_the_keyboard_alone(page: Page, account: str) -> None:
    page.goto("/signin")
    username = page.get_by_label("Username")
    expect(username).to_be_focused()  # autofocus: typing can start at once
    page.keyboard.type(account)
    page.keyboard.press("Tab")
    expect(page.get_by_label("Password")).to_be_focused()
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Sign in")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/dashboard$"))
    expect_signed_in_as(page, account)
