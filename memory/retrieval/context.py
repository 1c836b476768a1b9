"""Neighbouring-turn context for recall: memories remembered one after another in a session are
read together, so a strong match lends relevance to the turns around it, and a question that
matches lends it to the turn that answers it. Weights live in policy.Recall.

A neighbour's admission still rests on real relevance: its context is a share of a neighbour's
topical score, so nothing is admitted around a cue that matched nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memory.engines import storage_engine
from memory.retrieval.candidates import load_memories
from memory.retrieval.policy import Recall
from memory.retrieval.scored import Scored

# Memories (position: session, seq of the remember event) or imported episodes (session,
# ordinal in it: history.py); both rows carry pk, content and position.
Items = list[Scored[Any]]
Positions = dict[int, tuple[str, int]]
Around = Callable[[Positions], dict[tuple[str, int], int]]


def _positions(items: Items) -> Positions:
    """row pk → (session id, place in it), for items that have one."""
    return {it.obj.pk: it.obj.position for it in items if it.obj.position is not None}


def _around(positions: Positions) -> dict[tuple[str, int], int]:
    """(session, seq) → memory pk for the remember events next to the given positions."""
    wanted = {(s, q + d) for s, q in positions.values() for d in (-1, 1)}
    if not wanted:
        return {}
    sessions = sorted({s for s, _ in wanted})
    seqs = sorted({q for _, q in wanted})
    found = storage_engine().memories_at(sessions, seqs)
    return {(s, q): pk for pk, s, q in found if (s, q) in wanted}


def asks(text: str) -> bool:
    """Whether a turn asks something of the listener."""
    return "?" in text


def add_context(
    items: Items,
    score_rows: Callable[[list[Any]], Items],
    recall: Recall,
    around_of: Around = _around,
    load: Callable[[set[int]], list[Any]] = load_memories,
) -> Items:
    """Score the neighbours of the strongest items and give every item its context value, and
    the reply to a strong question its reply value; returns the items plus new neighbours.
    `around_of` and `load` find and load the rows next to given positions (memories by
    default; imported episodes pass their own, history.py).

    A turn two steps away is read at `far_share` when it is a candidate already: fetching more
    rows costs latency and measured no better held out."""
    seeds = sorted(items, key=lambda it: -it.topical)[: recall.context_seeds]
    positions = _positions(seeds)
    around = around_of(positions)
    known = {it.obj.pk for it in items}
    fresh = load({pk for pk in around.values() if pk not in known})
    everything = items + score_rows(fresh)
    at = {it.obj.position: it for it in everything if it.obj.position is not None}
    steps = ((-1, 1.0), (1, 1.0), (-2, recall.far_share), (2, recall.far_share))
    for seed in seeds:
        if seed.obj.pk not in positions:
            continue
        session_id, seq = positions[seed.obj.pk]
        for step, share in steps:
            neighbour = at.get((session_id, seq + step))
            if neighbour is not None:
                neighbour.context = max(neighbour.context, share * seed.topical)
        reply = at.get((session_id, seq + 1))
        if reply is not None and asks(seed.obj.content):
            reply.reply = max(reply.reply, seed.topical - recall.reply_from)
    return everything


def session_support(items: Items, top: int) -> dict[int, float]:
    """memory pk → mean score of the `top` best other admitted items of its session."""
    positions = _positions(items)
    by_session: dict[str, list[tuple[float, int]]] = {}
    for it in items:
        if it.obj.pk in positions:
            by_session.setdefault(positions[it.obj.pk][0], []).append((it.score, it.obj.pk))
    out: dict[int, float] = {}
    for members in by_session.values():
        members.sort(reverse=True)
        # The `top` best others of any member are among the session's `top` + 1 best: reading
        # only those keeps a session of thousands of candidates linear, with the same sums.
        head = members[: top + 1]
        for _score, pk in members:
            others = [s for s, p in head if p != pk][:top]
            out[pk] = sum(others) / top if others else 0.0
    return out
