"""Browse, search, open, navigate by keyboard and switch themes in a real browser."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import pages_wider_than_their_viewport, screenshot, sideways_scroll

pytestmark = pytest.mark.browser


def test_browse_from_home_to_an_item(page: Page) -> None:
    page.goto("/")
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    expect(page.locator(".deck-card").first).to_contain_text("38")
    screenshot(page, "home-light")
    page.get_by_role("link", name="Start with deep learning").click()
    expect(page).to_have_url(re.compile(r"/items\?deck=deep-learning$"))
    expect(page.locator(".item-row")).to_have_count(38)
    screenshot(page, "list-light")
    page.locator(".item-row a").nth(2).click()
    expect(page).to_have_url(re.compile(r"/items/activation-functions$"))
    expect(page.get_by_role("heading", level=1)).to_contain_text(
        "What are the most common activation functions"
    )
    expect(page.locator(".prose table")).to_have_count(1)
    expect(page.locator(".recall-list .recall")).to_have_count(2)
    screenshot(page, "item-light")


def test_search_as_you_type_updates_list_and_address(page: Page) -> None:
    page.goto("/items")
    expect(page.locator(".item-row").first).to_be_visible()
    entries = page.evaluate("history.length")
    page.locator("#q").press_sequentially("dropo", delay=250)  # pauses: a request per letter
    expect(page).to_have_url(re.compile(r"q=dropo"))
    first = page.locator(".item-row").first
    expect(first).to_contain_text("Dropout")
    expect(page.locator("#results-status")).to_contain_text("for “dropo”")
    assert page.evaluate("history.length") == entries  # typing replaces the entry
    expect(first.locator("mark").first).to_be_visible()
    screenshot(page, "search-dropout")
    page.locator("#q").fill("zzzqqqxxx")
    expect(page.locator(".empty-state")).to_contain_text("No questions match")
    expect(page).to_have_title(re.compile("zzzqqqxxx"))
    page.locator("#q").fill("dropout")
    page.locator("#q").press("Enter")  # submit: one htmx request, pushed to history
    expect(page).to_have_url(re.compile(r"q=dropout"))
    page.go_back()
    expect(page.locator("#q")).to_have_value(re.compile("zzzqqqxxx|dropo"))


def test_filters_update_through_htmx_and_the_url(page: Page) -> None:
    page.goto("/items")
    page.select_option("#difficulty", "advanced")
    expect(page).to_have_url(re.compile(r"difficulty=advanced"))
    badges = page.locator(".item-row .badge-advanced")
    expect(badges.first).to_be_visible()
    assert badges.count() == page.locator(".item-row").count()
    page.select_option("#deck", "pytorch-essentials")
    expect(page).to_have_url(re.compile(r"deck=pytorch-essentials"))
    expect(page.locator(".item-row .badge-deck").first).to_have_text("PyTorch essentials")


def test_keyboard_shortcuts(page: Page) -> None:
    page.goto("/items/activation-functions")
    page.keyboard.press("j")
    expect(page).to_have_url(re.compile(r"/items/vanishing-exploding-gradients$"))
    page.keyboard.press("k")
    expect(page).to_have_url(re.compile(r"/items/activation-functions$"))
    page.keyboard.press("/")
    expect(page.locator("#site-search")).to_be_focused()
    page.keyboard.type("j")  # typing in the box must not navigate
    expect(page).to_have_url(re.compile(r"/items/activation-functions$"))
    page.keyboard.press("Escape")
    page.keyboard.press("?")
    expect(page.locator("#shortcuts")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#shortcuts")).to_be_hidden()
    # The focus is not left on the closed dialog's checkbox.
    expect(page.locator("#shortcuts-enabled")).not_to_be_focused()


def test_j_and_k_walk_the_library_list(page: Page) -> None:
    page.goto("/items?deck=deep-learning")
    links = page.locator("#results .item-link")
    page.keyboard.press("j")
    expect(links.nth(0)).to_be_focused()
    page.keyboard.press("j")
    page.keyboard.press("j")
    expect(links.nth(2)).to_be_focused()
    page.keyboard.press("k")
    expect(links.nth(1)).to_be_focused()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/items/backpropagation-chain-rule$"))


def test_theme_toggle_is_remembered(page: Page) -> None:
    page.goto("/items/batch-normalization")
    html = page.locator("html")
    expect(html).not_to_have_attribute("data-theme", "dark")
    page.get_by_role("button", name="Switch to dark theme").click()
    expect(html).to_have_attribute("data-theme", "dark")
    page.reload()
    expect(html).to_have_attribute("data-theme", "dark")
    screenshot(page, "item-dark")
    page.goto("/items?q=gradient")
    screenshot(page, "list-dark")
    page.keyboard.press("t")
    expect(html).to_have_attribute("data-theme", "light")


def test_dark_theme_follows_the_system(browser: Browser, live_server: str) -> None:
    context = browser.new_context(base_url=live_server, color_scheme="dark")
    page = context.new_page()
    page.goto("/")
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(15, 17, 23)"
    screenshot(page, "home-dark")
    context.close()


def test_copy_button_copies_the_sample(browser: Browser, live_server: str) -> None:
    context = browser.new_context(
        base_url=live_server, permissions=["clipboard-read", "clipboard-write"]
    )
    page = context.new_page()
    page.goto("/items/dropout")
    page.locator(".copy-btn").first.click()
    expect(page.locator(".copy-btn .copy-label").first).to_have_text("Copied")
    expect(page.get_by_role("button", name="Copied sample 1")).to_be_visible()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith("import torch")
    context.close()


def test_phone_layout_has_no_horizontal_scroll(browser: Browser, live_server: str) -> None:
    context = browser.new_context(
        base_url=live_server,
        viewport={"width": 390, "height": 844},
        is_mobile=True,
        color_scheme="light",
    )
    page = context.new_page()
    for path, name in (
        ("/", "home-phone"),
        ("/items", "list-phone"),
        ("/items/activation-functions", "item-phone"),
    ):
        page.goto(path)
        overflow = sideways_scroll(page)
        assert overflow <= 0, f"{path} scrolls sideways by {overflow}px"
        screenshot(page, name)
    context.close()


def test_every_item_and_lab_page_fits_a_phone(browser: Browser, live_server: str) -> None:
    """Every page of the library, labs included: one long token (a title, a test's name)
    twice widened a page on a phone that the checks of a few chosen pages never opened."""
    context = browser.new_context(
        base_url=live_server, viewport={"width": 390, "height": 844}, is_mobile=True
    )
    page = context.new_page()
    listed = page.request.get("/api/items")
    slugs = [item["slug"] for item in listed.json()]
    decks = {item["deck"] for item in listed.json()}
    assert len(slugs) >= 38 + 20 and "labs" in decks
    overflows = pages_wider_than_their_viewport(page, [f"/items/{slug}" for slug in slugs])
    context.close()
    assert overflows == {}, f"item pages that scroll sideways on a phone, by px: {overflows}"


def test_on_a_phone_results_show_while_typing_and_targets_are_big_enough(
    browser: Browser, live_server: str
) -> None:
    context = browser.new_context(
        base_url=live_server, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True
    )
    page = context.new_page()
    page.goto("/items")
    expect(page.locator("#site-search")).to_be_hidden()  # one search box on the library
    fold = page.locator("details.filter-fold")
    expect(fold).not_to_have_attribute("open", "")  # folded into one control
    page.locator("#q").fill("dropout")
    first = page.locator("#results .item-link").first
    expect(first).to_contain_text("Dropout")
    box = first.bounding_box()
    # An on-screen keyboard takes about the lower 40% of the screen while typing.
    assert box is not None and box["y"] + 40 < 844 * 0.6, box
    fold.locator("summary").click()
    expect(page.locator("#deck")).to_be_visible()
    small = page.evaluate(
        """() => [...document.querySelectorAll(
                '.site-nav a, .btn, summary, select, input[type=search]')]
            .filter((el) => el.offsetParent !== null)
            .map((el) => [el.textContent.trim() || el.id, el.getBoundingClientRect().height])
            .filter(([, height]) => height < 44)"""
    )
    assert small == [], small
    page.goto("/items/batch-normalization")
    expect(page.locator(".hint-touch")).to_be_visible()  # "tap Run", not Ctrl+Enter
    expect(page.locator(".hint-keys")).to_be_hidden()
    context.close()


@pytest.mark.console_errors_expected  # Chromium logs every 404 response
def test_unknown_item_shows_the_404_page(page: Page) -> None:
    response = page.goto("/items/not-a-question")
    assert response is not None and response.status == 404
    expect(page.get_by_role("heading", level=1)).to_contain_text("could not find")


def test_an_item_page_arrives_compressed_and_small_on_a_cold_cache(page: Page) -> None:
    """Everything the page loads, as the browser counted it (headers included)."""
    responses = []
    page.on("response", lambda response: responses.append(response))
    page.goto("/items/dropout")
    expect(page.locator("figure.sample .cm-content").first).to_be_visible()
    page.wait_for_load_state("networkidle")
    total = page.evaluate(
        """() => performance.getEntriesByType("navigation")
            .concat(performance.getEntriesByType("resource"))
            .reduce((sum, entry) => sum + entry.transferSize, 0)"""
    )
    assert 0 < total < 150 * 1024, f"{total} bytes"
    encodings = {
        r.url.split("?")[0].rsplit("/", 1)[-1]: r.header_value("content-encoding")
        for r in responses
    }
    assert encodings["dropout"] == "gzip"
    assert encodings["codemirror-editor.min.js"] == "br"
    assert encodings["app.css"] == "br"


def test_a_page_without_code_loads_no_editor(page: Page) -> None:
    scripts: list[str] = []
    page.on("request", lambda request: scripts.append(request.url))
    page.goto("/items/pytorch-vs-tensorflow")  # an item with no code sample
    page.wait_for_load_state("networkidle")
    assert not [url for url in scripts if "codemirror" in url]


def test_the_exercise_list_searches_as_you_type_within_its_filters(page: Page) -> None:
    page.goto("/exercises")
    rows = page.locator("#results .item-row")
    expect(rows.first).to_be_visible()
    every = rows.count()
    page.locator("#q").press_sequentially("softm", delay=150)
    expect(page).to_have_url(re.compile(r"q=softm"))
    expect(rows.first).to_contain_text("Softmax")
    assert rows.count() < every
    expect(page.locator("#results-count")).to_contain_text("matching “softm”")
    page.locator("#difficulty").select_option("hard")  # the search stays as the filter changes
    expect(page).to_have_url(re.compile(r"difficulty=hard"))
    expect(page).to_have_url(re.compile(r"q=softm"))
    for text in rows.all_inner_texts():
        assert "Hard" in text
    page.locator("#q").fill("zzzqqqxxx")
    expect(page.locator(".empty-state")).to_contain_text(
        "No exercise matches “zzzqqqxxx” with these filters."
    )
    screenshot(page, "exercise-search-empty")
    page.get_by_role("link", name="Show every exercise").click()
    expect(rows).to_have_count(every)
