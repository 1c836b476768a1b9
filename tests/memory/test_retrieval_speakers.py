"""Speaker-aware matching (issue 3): what the person a question names said comes first."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.utils import timezone

from memory.retrieval import speakers
from memory.retrieval.engine import rank
from tests.memory.test_retrieval_dates import _remember

pytestmark = pytest.mark.django_db


def test_it_reads_the_speaker_label_of_a_transcript_line():
    assert speakers.speaker("Caroline: I went camping") == "caroline"
    assert speakers.speaker("Dr Lee: take two a day") == "dr"
    assert speakers.speaker("no label: here") is None
    assert speakers.without_speakers("Where did Caroline's kids go?", frozenset({"caroline"})) == (
        "Where did kids go?"
    )


def test_it_puts_the_named_speakers_own_words_first(monkeypatch):
    # Both lines name both people and are about camping; only the speaker differs.
    when = datetime(2023, 8, 1, tzinfo=UTC)
    for line in (
        "Caroline: Hi Melanie, nice to see you",
        "Melanie: Hey Caroline, nice to see you too",
        "Caroline: Melanie, my painting is done",
        "Melanie: Caroline, I love pottery",
    ):
        _remember(line, when)
    hers = _remember("Caroline: Melanie, I went camping at the beach with the kids", when)
    _remember("Melanie: Caroline, we went camping in the mountains with the kids", when)

    def first() -> int:
        cue = "Where did Caroline go camping?"
        return (
            rank(scope="project:dates", cue=cue, kind="recall", now=timezone.now())
            .memories[0]
            .obj.pk
        )

    assert first() == hers
    monkeypatch.setattr(speakers, "SPEAKER_WEIGHT", 0.0)
    assert first() != hers
