"""Edit and run a sample in the page: output streams in, the verdict explains itself."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import screenshot
from tests.support.sandbox_worker import needs_isolation

pytestmark = [pytest.mark.browser, needs_isolation]


def test_run_a_sample_with_the_button(page: Page) -> None:
    page.goto("/items/dropout")
    figure = page.locator("figure.sample").first
    expect(figure.locator(".cm-content")).to_be_visible()
    figure.get_by_role("button", name="Run").click()
    expect(figure.locator(".verdict")).to_have_text("Finished", timeout=30_000)
    expect(figure.locator(".run-stream")).to_contain_text("tensor(")
    expect(figure.locator(".verdict-facts")).to_contain_text("exit code 0")
    figure.scroll_into_view_if_needed()
    screenshot(page, "run-finished")


def test_edit_then_ctrl_enter_runs_the_edited_code_and_reset_restores_it(page: Page) -> None:
    page.goto("/items/activation-functions")
    figure = page.locator("figure.sample").first
    editor = figure.locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+End")
    page.keyboard.type("\nprint('edited <b>not bold</b>')\nraise ValueError('on purpose')")
    page.keyboard.press("Control+Enter")
    expect(figure.locator(".verdict")).to_have_text("The code raised an error", timeout=30_000)
    stream = figure.locator(".run-stream")
    expect(stream).to_contain_text("edited <b>not bold</b>")  # text, not HTML
    expect(stream.locator(".err").last).to_contain_text("ValueError: on purpose")
    assert stream.locator("b").count() == 0
    reset = figure.get_by_role("button", name="Reset")
    expect(reset).to_be_enabled()
    reset.click()
    expect(editor).not_to_contain_text("on purpose")
    page.keyboard.press("Escape")  # leaves the editor
    expect(editor).not_to_be_focused()


def test_a_guests_edits_survive_a_reload_until_reset(page: Page) -> None:
    page.goto("/items/activation-functions")
    figure = page.locator("figure.sample").first
    editor = figure.locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+End")
    page.keyboard.type("\nprint('my draft')")
    page.reload()
    figure = page.locator("figure.sample").first
    expect(figure.locator(".cm-content")).to_contain_text("print('my draft')")
    expect(figure.locator(".draft-note")).to_contain_text("kept in this browser")
    figure.get_by_role("button", name="Reset to original").click()
    expect(figure.locator(".cm-content")).not_to_contain_text("my draft")
    page.reload()
    expect(page.locator("figure.sample").first.locator(".cm-content")).not_to_contain_text(
        "my draft"
    )
    expect(page.locator("figure.sample").first.locator(".draft-note")).to_be_hidden()


def test_cancel_stops_a_long_run_whose_clock_was_running(page: Page) -> None:
    page.goto("/items/dropout")
    figure = page.locator("figure.sample").first
    figure.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.type("import time\nprint('working', flush=True)\ntime.sleep(60)\n")
    figure.get_by_role("button", name="Run").click()
    expect(figure.locator(".run-stream")).to_contain_text("working", timeout=30_000)
    clock = figure.locator(".run-clock")
    expect(clock).to_have_text(re.compile(r"^\d+\.\d s$"))
    expect(clock).to_have_text(re.compile(r"^[1-9]\d*\.\d s$"), timeout=5_000)  # it ticks
    figure.get_by_role("button", name="Cancel").click()
    expect(figure.locator(".verdict")).to_have_text("Stopped", timeout=15_000)
    expect(figure.locator(".verdict-detail")).to_have_text("Cancelled.")


def test_sample_that_cannot_run_here_says_why_and_points_to_its_variant(page: Page) -> None:
    page.goto("/items/transfer-learning-fine-tuning")
    original = page.locator("figure.sample").nth(0)
    expect(original.locator(".run-note")).to_contain_text("downloads weights or data")
    expect(original.locator(".run-note")).to_contain_text(
        re.compile(r"Samples 2 and 3 below are variants that run here")
    )
    variant = page.locator("figure.sample").nth(1)
    expect(variant.locator(".run-note")).to_contain_text("variant of sample 1")
    variant.get_by_role("button", name="Run").click()
    expect(variant.locator(".verdict")).to_have_text("Finished", timeout=60_000)
    # One variant is named alone.
    page.goto("/items/saving-and-loading-models")
    expect(page.locator("figure.sample").first.locator(".run-note")).to_contain_text(
        re.compile(r"Sample 2 below is a variant that runs here")
    )
    screenshot(page, "run-variant")


def test_running_a_lab_streams_its_progress_and_keeps_its_result_in_the_chart(page: Page) -> None:
    page.goto("/items/lab-elementwise-chain")
    results = page.locator("section.lab-results")
    expect(results).to_be_visible()
    kept = results.locator("tbody tr").count()
    figure = page.locator("figure.sample").first
    figure.get_by_role("button", name="Run").click()
    stream = figure.locator(".run-stream")
    expect(stream).to_contain_text("compiling (first call)", timeout=60_000)
    # Compiling is timed apart from the run's limit, and the toolbar says so as it goes.
    expect(figure.locator(".run-clock")).to_have_text(
        re.compile(r"compiling, \d+\.\d s"), timeout=60_000
    )
    expect(figure.locator(".run-state")).to_contain_text("Compiling (the first call")
    expect(figure.locator(".verdict")).to_have_text("Finished", timeout=170_000)
    expect(stream).to_contain_text("timing compiled, round 5/5")
    # The run of the unedited lab was kept: the measurements above it are fetched again.
    expect(results.locator("tbody tr")).to_have_count(kept + 1, timeout=10_000)
    chart = results.locator("figure.lab-chart svg")
    expect(chart).to_be_visible()
    expect(chart.locator("rect.bar-eager")).to_have_count(kept + 1)
    expect(chart.locator("rect.bar-compiled")).to_have_count(kept + 1)
    expect(results.locator(".lab-verdict")).not_to_be_empty()
    results.scroll_into_view_if_needed()
    screenshot(page, "lab-chart")
