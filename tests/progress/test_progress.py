"""The rules of progress (app/progress/progress.py): status, mastery, streak, calendar."""

from __future__ import annotations

from datetime import date, timedelta

from app.progress.progress import Check, Status, calendar, item_status, streak

MONDAY = date(2026, 11, 16)


def status(**kwargs: object) -> Status:
    defaults: dict[str, object] = {
        "visits": 0,
        "runs": 0,
        "runs_ok": 0,
        "checks": [],
        "prompts": [1, 2],
        "has_code": True,
    }
    return item_status(**{**defaults, **kwargs})  # type: ignore[arg-type]


def test_status_follows_what_the_learner_did() -> None:
    assert status() is Status.new
    assert status(visits=3) is Status.seen
    assert status(visits=1, runs=1) is Status.practising
    assert status(checks=[Check(1, False, MONDAY)]) is Status.practising


def test_mastery_needs_every_prompt_known_on_two_days_and_the_code_run() -> None:
    day2 = MONDAY + timedelta(days=1)
    both_twice = [Check(p, True, d) for d in (MONDAY, day2) for p in (1, 2)]
    assert status(checks=both_twice, runs=1, runs_ok=1) is Status.mastered
    assert status(checks=both_twice, runs=1, runs_ok=0) is Status.practising  # code never ran ok
    same_day = [Check(p, True, MONDAY) for p in (1, 2, 1, 2)]
    assert status(checks=same_day, runs_ok=1, runs=1) is Status.practising  # not spaced
    one_prompt = [Check(1, True, d) for d in (MONDAY, day2)]
    assert status(checks=one_prompt, runs_ok=1, runs=1) is Status.practising
    forgot = [*both_twice, Check(2, False, day2)]
    assert status(checks=forgot, runs_ok=1, runs=1) is Status.practising  # latest answer counts


def test_an_items_exercises_count_as_its_code_and_as_practice() -> None:
    day2 = MONDAY + timedelta(days=1)
    both_twice = [Check(p, True, d) for d in (MONDAY, day2) for p in (1, 2)]
    assert status(exercises_tried=1) is Status.practising
    assert status(checks=both_twice, exercises_tried=1) is Status.practising  # not solved
    assert status(checks=both_twice, exercises_tried=1, exercises_solved=1) is Status.mastered
    assert status(exercises_tried=1, exercises_solved=1) is Status.practising  # prompts unknown


def test_items_without_prompts_or_code_use_their_own_question() -> None:
    twice = [Check(0, True, MONDAY), Check(0, True, MONDAY + timedelta(days=3))]
    assert status(checks=twice, prompts=[], has_code=False) is Status.mastered


def test_streak_counts_practice_days_in_a_row_up_to_today_or_yesterday() -> None:
    today = MONDAY
    days = [today - timedelta(days=n) for n in (0, 1, 2, 4)]
    assert streak(days, today=today) == 3
    assert streak(days[1:], today=today) == 2  # nothing yet today: the streak still stands
    assert streak(days[2:], today=today) == 0  # yesterday was missed
    assert streak([], today=today) == 0


def test_calendar_covers_whole_weeks_ending_this_week() -> None:
    today = MONDAY + timedelta(days=2)  # a Wednesday
    cells = calendar({today: (2, 3), MONDAY: (1, 0)}, today=today, weeks=4)
    assert cells[0].day == MONDAY - timedelta(weeks=3) and cells[0].weekday == 0
    assert cells[-1].day == today and cells[-1].week == 3 and cells[-1].weekday == 2
    by_day = {c.day: c for c in cells}
    assert by_day[today].level > by_day[MONDAY].level > 0
    assert "3 practice actions, 2 pages read" in by_day[today].label
