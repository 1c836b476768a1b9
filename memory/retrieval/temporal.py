"""English temporal cues → UTC windows (spec §7.3). A ranking signal, not date arithmetic."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from memory.retrieval.policy import DEFAULT_POLICY

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
WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_WEEKDAY = re.compile(r"\b(?:last|past|previous)\s+(" + "|".join(WEEKDAYS) + r")\b")
# Northern-hemisphere meteorological seasons: first month, and months spanned.
SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_SEASON = re.compile(r"\b(this|last|past|previous)\s+(spring|summer|autumn|fall|winter)\b")
_FEW = re.compile(r"\b(?:past|last)\s+(few|couple of|several)\s+(day|week|month)s\b")
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
_MONTH = re.compile(r"\b(" + _MONTH_NAMES + r")\b\.?(?:,?\s+(\d{4})\b)?")
# "October 13, 2023" and "13 October, 2023" (ordinal suffixes allowed).
_MONTH_DAY_YEAR = re.compile(
    r"\b(" + _MONTH_NAMES + r")\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b"
)
_DAY_MONTH_YEAR = re.compile(
    r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(" + _MONTH_NAMES + r")\.?,?\s+(\d{4})\b"
)
# "between August 11 and August 15 2023", "from 3 May to 9 May, 2023": a year may be given once.
_RANGE = re.compile(
    r"\b(?:between|from)\s+(.+?)\s+(?:and|to|until|till)\s+(.+?)(?:[?!]|\.\s|\.$|$)"
)
_MONTH_DAY = re.compile(
    r"\b(" + _MONTH_NAMES + r")\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4}))?"
)
_DAY_MONTH = re.compile(
    r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(" + _MONTH_NAMES + r")\b\.?(?:,?\s+(\d{4}))?"
)
# Things are told on the day they happen or in the days after ("I went yesterday", "last
# weekend"), so a named day matches what was recorded up to a week later. On LoCoMo 52 of 61
# evidence turns for a day-specific question fall on that day and 6 of the other 9 in the
# 4 days after. With ranges: temporal evidence recall@10 0.888 -> 0.899, @20 0.912 -> 0.923,
# nothing lost elsewhere (tuning and held-out conversations alike). The lag is a policy value
# (policy.ScoreTerms.report_lag_days).
_YEAR = re.compile(r"\b(?:in|during|of|since)\s+((?:19|20)\d{2})\b")


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


def parse_window(
    text: str, now: datetime, lag_days: int = DEFAULT_POLICY.terms.report_lag_days
) -> Window | None:
    """The most specific temporal cue in text as a window, or None.

    A calendar date a question names outranks a vague "recently" in the same question: "what
    did she recommend recently, on 7 February 2022?" is about that day. A named day also
    matches what was told in the `lag_days` after it.
    """
    lowered = text.lower()
    return (
        _calendar(lowered, timedelta(days=lag_days))
        or _relative_cue(lowered, now)
        or _month(lowered, now)
    )


def _date(year: str, month: str, day: str, lag: timedelta) -> Window | None:
    try:
        start = datetime(int(year), MONTHS[month] if month in MONTHS else int(month), int(day))
    except ValueError:
        return None
    start = start.replace(tzinfo=UTC)
    return Window(start, start + timedelta(days=1) + lag)


def _day_in(text: str) -> tuple[str | None, str, str] | None:
    """(year or None, month, day) of the first day named in text."""
    if match := _ISO.search(text):
        return match.group(1), match.group(2), match.group(3)
    if match := _MONTH_DAY.search(text):
        return match.group(3), match.group(1), match.group(2)
    if match := _DAY_MONTH.search(text):
        return match.group(3), match.group(2), match.group(1)
    return None


def _range(lowered: str, lag: timedelta) -> Window | None:
    """From the first to the last day of "between <day> and <day>"; a year named once holds
    for both."""
    if not (match := _RANGE.search(lowered)):
        return None
    first, last = _day_in(match.group(1)), _day_in(match.group(2))
    if first is None or last is None or not (year := last[0] or first[0]):
        return None
    opening = _date(first[0] or year, first[1], first[2], lag)
    closing = _date(last[0] or year, last[1], last[2], lag)
    if opening is None or closing is None or closing.start < opening.start:
        return None
    return Window(opening.start, closing.end)


def _calendar(lowered: str, lag: timedelta) -> Window | None:
    if window := _range(lowered, lag):
        return window
    if match := _ISO.search(lowered):
        return _date(match.group(1), match.group(2), match.group(3), lag)
    if match := _MONTH_DAY_YEAR.search(lowered):
        return _date(match.group(3), match.group(1), match.group(2), lag)
    if match := _DAY_MONTH_YEAR.search(lowered):
        return _date(match.group(3), match.group(2), match.group(1), lag)
    if (match := _MONTH.search(lowered)) and match.group(2):
        return _month_window(int(match.group(2)), MONTHS[match.group(1)])
    return None


def _relative_cue(lowered: str, now: datetime) -> Window | None:
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
    return _named_relative(lowered, now, today)


def _named_relative(lowered: str, now: datetime, today: datetime) -> Window | None:
    """ "last Saturday", "last spring", "the past few weeks", read against the cue's time."""
    if match := _WEEKDAY.search(lowered):
        back = (today.weekday() - WEEKDAYS[match.group(1)] - 1) % 7 + 1  # 1..7 days before
        day = today - timedelta(days=back)
        return Window(day, day + timedelta(days=2))  # told that day or the next
    if match := _SEASON.search(lowered):
        return _season(match.group(1) == "this", SEASONS[match.group(2)], now)
    if match := _FEW.search(lowered):
        count = {"few": 3, "couple of": 2, "several": 4}[match.group(1)]
        span = timedelta(days=UNITS[match.group(2)] * (count + 1))
        return Window(now - span, now + timedelta(seconds=1))
    return None


def _season(current: bool, first: int, now: datetime) -> Window:
    """This year's season (this) or the latest one already over (last)."""
    year = now.year if first <= now.month or first == 12 else now.year - 1
    if first == 12 and now.month < 3:
        year -= 1  # January and February belong to the winter that began last December
    start = datetime(year, first, 1, tzinfo=UTC)
    end = datetime(year + (first >= 10), (first + 2) % 12 + 1, 1, tzinfo=UTC)
    if not current and end > now:
        start, end = start.replace(year=year - 1), end.replace(year=end.year - 1)
    return Window(start, end)


def _month(lowered: str, now: datetime) -> Window | None:
    if match := _MONTH.search(lowered):
        if match.group(1) == "may":
            return None  # "may" without a year is far more often the verb than the month
        month = MONTHS[match.group(1)]
        # Without a year the month is read in any year: histories are often older than a year.
        latest = _month_window(now.year if month <= now.month else now.year - 1, month)
        return Window(latest.start, latest.end, month=month)
    if match := _YEAR.search(lowered):
        year = int(match.group(1))
        return Window(datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC))
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


def temporal_bonus(
    window: Window | None, moment: datetime | None, inside: float, outside: float
) -> float:
    """`inside` for an item told within the cue's window, `outside` for one told elsewhere."""
    if window is None or moment is None:
        return 0.0
    return inside if window.contains(moment) else outside
