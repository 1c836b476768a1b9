"""Date-aware cue parsing (issue 3): a calendar date in a question is the window it asks about."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.utils import timezone

from memory.retrieval.engine import rank
from memory.retrieval.temporal import parse_window
from memory.schemas import ActivateIn, RememberIn
from memory.services.activate import session_activate
from memory.services.remember import memory_remember
from memory.services.sessions import ClientInfo

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


def _day(year: int, month: int, day: int) -> datetime:
    return datetime(year, month, day, 15, tzinfo=UTC)


def test_it_reads_written_out_calendar_dates():
    for text in (
        "What painting did she show on October 13, 2023?",
        "What did she show on 13 October, 2023?",
        "What did she show on the 13th of October 2023?",
        "What did she show on Oct. 13th 2023?",
    ):
        window = parse_window(text, NOW)
        assert window.contains(_day(2023, 10, 13)), text
        assert not window.contains(_day(2023, 10, 12)), text


def test_a_named_day_matches_what_was_told_in_the_week_after():
    window = parse_window("What did she paint on 13 October, 2023?", NOW)
    assert window.contains(_day(2023, 10, 14))  # "I painted it yesterday"
    assert window.contains(_day(2023, 10, 20))
    assert not window.contains(_day(2023, 10, 21))


def test_it_reads_a_range_of_days_with_the_year_named_once():
    for text in (
        "Where was John between August 11 and August 15 2023?",
        "Where was John from 11 August to 15 August, 2023?",
        "Where was John between 2023-08-11 and 2023-08-15?",
    ):
        window = parse_window(text, NOW)
        assert window.contains(_day(2023, 8, 11)), text
        assert window.contains(_day(2023, 8, 13)), text
        assert not window.contains(_day(2023, 8, 10)), text
        assert not window.contains(_day(2023, 8, 23)), text


def test_it_prefers_a_named_date_to_a_vague_one():
    window = parse_window("What did she start recently, as mentioned on 3 June, 2023?", NOW)
    assert window.contains(_day(2023, 6, 3))
    assert not window.contains(NOW)


def test_it_reads_a_month_with_a_comma_before_the_year_and_a_bare_year():
    assert parse_window("the cake she made in May, 2022", NOW).contains(_day(2022, 5, 20))
    beach = parse_window("How often did she go to the beach in 2023?", NOW)
    assert beach.contains(_day(2023, 8, 1)) and not beach.contains(_day(2022, 8, 1))
    assert parse_window("an invalid day, February 30, 2023", NOW).month == 2


def _remember(content: str, occurred_at: datetime) -> int:
    # One session per memory, so that no neighbouring turn lends context.
    opened = session_activate(
        data=ActivateIn(task="seed", initial_goal="g", scope="project:dates"),
        client=ClientInfo(),
        now=timezone.now(),
    )
    reply = memory_remember(
        data=RememberIn(
            scope="project:dates",
            session_id=opened["session_id"],
            memories=[{"content": content, "type": "fact", "occurred_at": occurred_at.isoformat()}],
        ),
        now=timezone.now(),
    )
    return int(reply["results"][0]["data"]["memory_id"][4:])


@pytest.mark.django_db
def test_it_ranks_the_turn_from_the_named_day_first():
    _remember("Melanie: look at my newest painting", _day(2023, 8, 14))
    on_the_day = _remember("Melanie: this painting is my latest one", _day(2023, 10, 13))
    ranking = rank(
        scope="project:dates",
        cue="Which painting did Melanie show recently, on October 13, 2023?",
        kind="recall",
        now=timezone.now(),
    )
    assert ranking.memories[0].obj.pk == on_the_day
