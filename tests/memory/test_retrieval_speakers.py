"""Speaker-aware matching (issue 3): what the person a question names said comes first."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.utils import timezone

from memory.models import Memory
from memory.retrieval import engine, speakers
from memory.retrieval.engine import rank
from tests.memory.test_retrieval_dates import _remember
from tests.memory.test_retrieval_signals import SCOPE, _facts, _ranked, _without

pytestmark = pytest.mark.django_db


def test_it_reads_the_speaker_label_of_a_transcript_line():
    assert speakers.speaker("Caroline: I went camping") == "caroline"
    assert speakers.speaker("Dr Lee: take two a day") == "dr"
    assert speakers.speaker("no label: here") is None
    assert speakers.without_speakers("Where did Caroline's kids go?", frozenset({"caroline"})) == (
        "Where did kids go?"
    )


def test_it_puts_the_named_speakers_own_words_first():
    # Both lines name both people and are about camping; only the speaker differs. The score
    # signal is under test here, so no lines are led by speaker.
    unled = _without("speakers", lead=0)
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

    def first(policy) -> int:
        cue = "Where did Caroline go camping?"
        ranking = rank(
            scope="project:dates", cue=cue, kind="recall", now=timezone.now(), policy=policy
        )
        return ranking.memories[0].obj.pk

    assert first(unled) == hers
    assert first(_without("speakers", lead=0, said_weight=0.0)) != hers


def test_a_cue_naming_a_speaker_also_searches_without_the_name():
    """With pools two deep, Ana's lines fill the named cue's pools by her name and "feel";
    what Ben said about her comes in through the name-free cue alone (no word of it matches
    the question, so BM25 cannot find it either)."""
    moods = ["happy", "calm", "worried", "excited", "tired"]
    topics = ["the weather", "soup", "the train", "tomatoes", "history", "the printer"]
    lines = [f"Ana: I feel {moods[n % 5]} about {topics[n % 6]} (note {n})." for n in range(40)]
    lines += [f"Ben: I fixed the bike chain on day {n}." for n in range(3)]
    lines.append("Ben: She told me yachts terrify her.")
    yachts = _facts(*lines)[-1]
    shallow = _without("candidates", pool=2, whole_cue_pool_per_term=0)
    ranking = rank(
        scope=SCOPE,
        cue="What does Ana feel about boats?",
        kind="recall",
        now=timezone.now(),
        policy=shallow,
    )
    assert ranking.cue.rank_vectors is not ranking.cue.vectors  # the cue names a speaker
    (pool,) = engine._gather(ranking.cue, "memory", [SCOPE], shallow)
    assert yachts not in pool.dense and yachts not in pool.lexical
    assert yachts in pool.related
    assert yachts in [it.obj.pk for it in ranking.memories]


def test_a_cue_naming_one_speaker_opens_with_their_own_lines():
    """The race was Melanie's; a question that gives it to Caroline opens with Caroline's own
    lines on running, and still returns Melanie's race further down."""
    lines = [
        "Caroline: Running in the morning clears my head before work.",
        "Caroline: I signed up for a running club near the park.",
        "Melanie: The kids loved the pottery class on Saturday.",
        "Melanie: We painted the fence blue last weekend.",
        "Caroline: My shoes wore out after a month of running.",
        "Melanie: I ran a charity race for mental health and realized self-care matters most.",
    ]
    ids = _facts(*lines)
    race = ids[-1]
    carolines = {pk for pk, line in zip(ids, lines, strict=True) if line.startswith("Caroline")}

    cue = "What did Caroline realize after her charity race?"
    led = _ranked(cue)
    assert len(led[:3]) == 3 and set(led[:3]) <= carolines
    assert race in led
    # A stale line of hers stays with the historical items, behind every current one (and
    # before recall's depth fill under the floor, which comes after everything admitted).
    Memory.objects.filter(pk=led[0]).update(status=Memory.Status.STALE, stale_reason="outdated")
    after = _ranked(cue, policy=_without("depth", items=0))
    assert after[0] in carolines - {led[0]}
    assert after[-1] == led[0]
    assert _ranked(cue, policy=_without("speakers", lead=0))[0] == race


def test_a_named_speakers_reply_about_the_listener_does_not_lead():
    """Caroline praising Melanie's race is Caroline's line, but it is about Melanie: a question
    about Caroline's race opens with what Caroline said of herself."""
    lines = [
        "Caroline: Wow Melanie, your charity race sounds amazing, you must be so proud of it!",
        "Caroline: I went running by the river before my shift.",
        "Caroline: My running club meets on Sunday mornings.",
        "Caroline: I bought new shoes for my morning runs.",
        "Melanie: I ran a charity race for mental health last weekend.",
    ]
    ids = _facts(*lines)
    praise = ids[0]
    cue = "What did Caroline realize after her charity race?"
    assert speakers.of_themselves(lines[1]) and not speakers.of_themselves(lines[0])
    assert speakers.of_themselves("Tim: The race starts at 7 am")
    assert not speakers.of_themselves("Caroline: Cool! Got any fav tunes?")
    assert speakers.of_themselves("Caroline: I\u2019m back at the club")  # typographic apostrophe
    led = _ranked(cue)
    assert praise in led and praise not in led[:3]
    assert set(led[:3]) == set(ids[1:4])
