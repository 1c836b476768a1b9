"""Ranking-policy overrides for the benches (``--policy NAME=VALUE``, repeatable).

The questions of a run are ranked under the active policy with the overrides applied, installed
process-wide while they are asked; ingest always runs under the unmodified policy, so a kept
store is the same whatever a later run overrides. The policy itself lives in
memory/retrieval/policy.py.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from memory.retrieval import policy as ranking


def resolve(overrides: Sequence[str]) -> ranking.RankingPolicy:
    """The active policy with the overrides applied; ValueError naming a bad one."""
    return ranking.active().with_overrides(list(overrides))


@contextmanager
def installed(policy: ranking.RankingPolicy) -> Iterator[ranking.RankingPolicy]:
    """Every thread ranks with ``policy`` inside the block; back to the settings' after."""
    ranking.set_active(policy)
    try:
        yield policy
    finally:
        ranking.set_active(None)


def describe(policy: ranking.RankingPolicy, overrides: Sequence[str]) -> dict[str, Any]:
    """What a report's configuration records about the ranking."""
    return {"version": policy.version, "overrides": list(overrides)}
