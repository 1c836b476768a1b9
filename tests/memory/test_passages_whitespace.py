"""A long whitespace run costs what prose of the same length costs (issue 26, 7).

Sentence splitting (memory.passages.split) serves remember, the embeddings backfill and
imports. It once rescanned a whitespace run from each of its characters: 8,000 spaces, tabs or
no-break spaces took about a second a memory, seconds on a busy machine, against well under a
millisecond for prose. Measured as a ratio against prose of equal length, so a slow machine
slows both sides alike.
"""

from __future__ import annotations

import time

import pytest

from memory import passages
LENGTH = 7_900
PROSE = ("The deploy needs its migrations applied before the release tag. " * 200)[:LENGTH]


def _padded(whitespace: str) -> str:
    head, tail = "Alpha beta gamma", "delta epsilon zeta."
    return head + whitespace * (LENGTH - len(head) - len(tail)) + tail


def _best_of(calls: int, run) -> float:
    best = float("inf")
    for _ in range(calls):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


@pytest.mark.parametrize("whitespace", [" ", "\t", "\u00a0", " \u3000"])
def test_splitting_a_whitespace_run_is_within_a_small_factor_of_prose(whitespace: str) -> None:
    text = _padded(whitespace)
    assert len(text) == len(PROSE) or whitespace == " \u3000"
    prose = _best_of(5, lambda: passages.split(PROSE))
    run = _best_of(5, lambda: passages.split(text))
    assert run < 10 * prose + 0.002, (run, prose)
