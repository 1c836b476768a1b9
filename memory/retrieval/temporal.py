"""English temporal cues → UTC windows (spec §7.3). A ranking signal, not date arithmetic."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

IN_WINDOW = 0.15
OUT_OF_WINDOW = -0.05
MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}
NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "couple": 2,
    "few": 3,
}
_AGO = re.compile(
    r"\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|couple of|few)\s+"
    r"(day|week|month|year)s?\s+ago\b"
)
_RELATIVE = re.compile(r"\b(this|last|past|previous)\s+(week|month|year)\b")
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH = re.compile(
    r"\b(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\b\.?(?:\s+(\d{4}))?"
)


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime
    month: int | None = None  # a month named without a year matches that month of any year

    def contains(self, moment: datetime) -> bool:
        if self.month is not None:
            return moment.month == self.month
        return self.start <= moment < self.end


def _day(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _month_window(year: int, month: int) -> Window:
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return Window(start, end)


def parse_window(text: str, now: datetime) -> Window | None:
    """The first temporal cue in text as a window, or None."""
    lowered = text.lower()
    today = _day(now)
    if re.search(r"\btoday\b", lowered):
        return Window(today, today + timedelta(days=1))
    if re.search(r"\byesterday\b", lowered):
        return Window(today - timedelta(days=1), today)
    if re.search(r"\brecently\b|\blately\b", lowered):
        return Window(now - timedelta(days=14), now + timedelta(seconds=1))
    if match := _AGO.search(lowered):
        count = NUMBER_WORDS.get(match.group(1).split()[0], None) or int(match.group(1))
        span = UNITS[match.group(2)]
        center = today - timedelta(days=count * span)
        half = timedelta(days=max(1, span // 2 + (span > 1)))
        return Window(center - half, center + half + timedelta(days=1))
    if match := _RELATIVE.search(lowered):
        return _relative(match.group(1), match.group(2), now, today)
    if match := _ISO.search(lowered):
        try:
            start = datetime(
                int(match.group(1)), int(match.group(2)), int(match.group(3)), tzinfo=UTC
            )
        except ValueError:
            return None
        return Window(start, start + timedelta(days=1))
    if match := _MONTH.search(lowered):
        if match.group(1) == "may" and not match.group(2):
            return None  # "may" is far more often the verb than the month
        month = MONTHS[match.group(1)]
        if match.group(2):
            return _month_window(int(match.group(2)), month)
        # Without a year the month is read in any year: histories are often older than a year.
        latest = _month_window(now.year if month <= now.month else now.year - 1, month)
        return Window(latest.start, latest.end, month=month)
    return None


def _relative(which: str, unit: str, now: datetime, today: datetime) -> Window:
    current = which == "this"
    # "last week/month" is read as "about a week/month ago", so that yesterday, which a
    # calendar reading would include on a Monday, never counts as last week.
    if unit == "week":
        if current:
            return Window(now - timedelta(days=7), now + timedelta(seconds=1))
        return Window(now - timedelta(days=10.5), now - timedelta(days=3.5))
    if unit == "month":
        if current:
            return _month_window(now.year, now.month)
        return Window(now - timedelta(days=45), now - timedelta(days=15))
    if current:
        return Window(
            datetime(now.year, 1, 1, tzinfo=UTC), datetime(now.year + 1, 1, 1, tzinfo=UTC)
        )
    return Window(datetime(now.year - 1, 1, 1, tzinfo=UTC), datetime(now.year, 1, 1, tzinfo=UTC))


def temporal_bonus(window: Window | None, moment: datetime | None) -> float:
    if window is None or moment is None:
        return 0.0
    return IN_WINDOW if window.contains(moment) else OUT_OF_WINDOW
