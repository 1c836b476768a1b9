"""A heavy cue (a pasted document as the task) is read up to a working bound, and leaves no
cache entry of its own behind; a cue within the bound is read whole, as it always was."""

from __future__ import annotations

import random

import pytest
from django.utils import timezone

from memory import text
from memory.retrieval.engine import rank
from memory.retrieval.facets import WORKING_CUE_CHARS, working_cue


def _document(n_chars: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    words = "retry billing queue deploy schema invoice cache worker".split()
    lines = []
    while sum(len(line) + 1 for line in lines) < n_chars:
        lines.append(" ".join(f"{rng.choice(words)}{rng.randrange(300)}" for _ in range(12)))
    return "\n".join(lines)[:n_chars]


def test_it_reads_a_cue_within_the_bound_whole() -> None:
    cue = _document(WORKING_CUE_CHARS)
    assert working_cue(cue) == (cue, False)


def test_it_cuts_a_longer_cue_at_a_word_boundary() -> None:
    cue = _document(20_000)
    read, cut = working_cue(cue)
    assert cut and len(read) <= WORKING_CUE_CHARS
    assert cue.startswith(read) and cue[len(read)].isspace()


@pytest.mark.django_db
def test_a_heavy_cue_ranks_on_its_working_part_and_says_it_was_truncated() -> None:
    ranking = rank(scope="project:heavy", cue=_document(20_000), kind="recall", now=timezone.now())
    assert ranking.truncated
    assert len(ranking.facets) == 33  # 32 facets and the whole (working) cue
    assert len(ranking.facets[-1]) <= WORKING_CUE_CHARS


def test_stems_of_a_text_longer_than_any_memory_are_not_cached() -> None:
    looked_up = text._cached_stems.cache_info()
    long_text = _document(12_000, seed=7)
    assert text.stems(long_text) == text.stems(long_text)
    assert text._cached_stems.cache_info() == looked_up  # never even asked
    text.stems(f"a memory about the billing queue {random.random()}")
    assert text._cached_stems.cache_info().misses == looked_up.misses + 1
