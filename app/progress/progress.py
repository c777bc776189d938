"""The rules of progress, as plain functions over what a learner did: an item's status,
the streak, the activity calendar. No database here: app/progress/study.py feeds them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from enum import StrEnum

CALENDAR_WEEKS = 26  # about six months, as the dashboard shows


class Status(StrEnum):
    new = "new"  # never opened
    seen = "seen"  # opened, not yet practised
    practising = "practising"  # ran its code or checked its prompts
    mastered = "mastered"  # every prompt known on two days, and its code run to the end

    @property
    def label(self) -> str:
        return STATUS_LABELS[self]


STATUS_LABELS = {
    Status.new: "Not yet seen",
    Status.seen: "Seen",
    Status.practising: "Practising",
    Status.mastered: "Mastered",
}
MASTERY_RULE = (
    "An item is mastered when you recalled each of its prompts well on two different days "
    "(in a quiz, or by ticking most key points of an open answer; the latest answer "
    "counting), and, when it has code, ran it to an ok verdict or solved one of its code "
    "exercises. Working on one of its exercises counts as practising it."
)


@dataclass(frozen=True)
class Check:
    """One recall check: the prompt's position, whether the learner knew it, and when."""

    prompt: int
    knew: bool
    day: date


def item_status(
    *,
    visits: int,
    runs: int,
    runs_ok: int,
    checks: Iterable[Check],
    prompts: Iterable[int],
    has_code: bool,
    exercises_tried: int = 0,
    exercises_solved: int = 0,
) -> Status:
    """Derive an item's status from what the learner did (checks in the order answered).
    Its code exercises count as its code: a solved one as much as a sample run to the end."""
    checks = list(checks)
    required = list(prompts) or [0]  # no prompts: the item's own question is the prompt
    latest: dict[int, bool] = {}
    days_known: dict[int, set[date]] = {}
    for check in checks:
        latest[check.prompt] = check.knew
        if check.knew:
            days_known.setdefault(check.prompt, set()).add(check.day)
    knows_all = all(latest.get(p) and len(days_known.get(p, ())) >= 2 for p in required)
    if knows_all and (runs_ok > 0 or exercises_solved > 0 or not has_code):
        return Status.mastered
    if runs or checks or exercises_tried:
        return Status.practising
    return Status.seen if visits else Status.new


def streak(practice_days: Iterable[date], *, today: date) -> int:
    """Days in a row with practice (runs or recall checks, not mere reading), ending today,
    or yesterday when today has none yet."""
    days = set(practice_days)
    day = today if today in days else today - timedelta(days=1)
    count = 0
    while day in days:
        count += 1
        day -= timedelta(days=1)
    return count


@dataclass(frozen=True)
class CalendarCell:
    """One day of the activity calendar, placed on the grid."""

    day: date
    week: int  # column, oldest first
    weekday: int  # row, Monday = 0
    level: int  # 0 (nothing) to 4 (a lot), for the colour
    views: int
    practice: int

    @property
    def label(self) -> str:
        if not self.views and not self.practice:
            return f"{self.day:%a %d %b %Y}: no activity"
        return (
            f"{self.day:%a %d %b %Y}: {self.practice} practice "
            f"{'action' if self.practice == 1 else 'actions'}, {self.views} "
            f"{'page' if self.views == 1 else 'pages'} read"
        )


def calendar(
    activity: Mapping[date, tuple[int, int]], *, today: date, weeks: int = CALENDAR_WEEKS
) -> list[CalendarCell]:
    """The last `weeks` weeks (Monday to Sunday columns, ending with this week), each day's
    (views, practice) turned into a level. Practice weighs more than reading."""
    start = today - timedelta(days=today.weekday() + 7 * (weeks - 1))
    cells = []
    for offset in range((today - start).days + 1):
        day = start + timedelta(days=offset)
        views, practice = activity.get(day, (0, 0))
        score = practice * 2 + views
        level = 0 if score == 0 else 1 if score < 3 else 2 if score < 8 else 3 if score < 16 else 4
        cells.append(CalendarCell(day, offset // 7, day.weekday(), level, views, practice))
    return cells
