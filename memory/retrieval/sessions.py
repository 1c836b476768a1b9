"""Session-level evidence: each recorded session read as one document, scored against the cue.

A long history answers many questions with a session, not a turn: "what did I say about the
trip" is spread over several turns, none of which matches well alone. Here a session's turns are
pooled and scored like one BM25 document over the cue's discriminative terms (each term's
postings read from the lexical index, so a session is found even when none of its turns is a
candidate); the best sessions then bring their best-matching turns into the candidates, and
signals.session_evidence lends each session's strength to its best turns. The weights live in
policy.Sessions; what a score records is signals.py's.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from memory import lexical
from memory.engines import storage_engine
from memory.retrieval.candidates import ELIGIBLE_STATUSES, MemoryRow
from memory.retrieval.policy import Sessions
from memory.retrieval.scored import Cue, Scored
from memory.retrieval.scoring import idf
from memory.text import tokens


@dataclass(frozen=True)
class SessionMatches:
    """Sessions matching the cue as wholes: strength 1.0 for the best, and each session's turns
    holding the most cue-term weight, best first."""

    strength: dict[str, float] = field(default_factory=dict)
    turns: dict[str, list[int]] = field(default_factory=dict)

    def turn_ids(self) -> set[int]:
        return {pk for pks in self.turns.values() for pk in pks}


def _sessions_of(pks: set[int]) -> dict[int, str]:
    """memory pk -> the session it was remembered in, for eligible memories with one."""
    return storage_engine().memory_sessions(sorted(pks), ELIGIBLE_STATUSES)


def _lengths(sessions: set[str]) -> dict[str, int]:
    """Remembered turns per session."""
    return storage_engine().session_lengths(sorted(sessions))


def session_matches(
    *, cue: str, scopes: list[str], eligible: int, rule: Sessions
) -> SessionMatches:
    """BM25 over sessions as documents (term frequency = the session's turns holding the term)
    for terms in at most `max_df_share` of the items (or `min_postings`, in a small scope): the
    `sessions` best, normalised by the best, with their `turns` best turns each."""
    if rule.evidence_weight <= 0 or eligible <= 0:
        return SessionMatches()
    # A lone letter is a possessive's or a contraction's ("Biscuit's"), never a subject.
    terms = [t for t in dict.fromkeys(tokens(cue)) if len(t) > 1]
    frequencies = lexical.document_frequencies("memory", terms, scopes)
    cap = max(rule.min_postings, int(rule.max_df_share * eligible))
    useful = {t: idf(eligible, df) for t, df in frequencies.items() if 0 < df <= cap}
    postings = {t: lexical.rows_with_term("memory", t, scopes, cap) for t in useful}
    session_of = _sessions_of({pk for pks in postings.values() for pk in pks})
    weight: dict[int, float] = defaultdict(float)
    held: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for term, pks in postings.items():
        for pk in pks:
            if pk in session_of:
                weight[pk] += useful[term]
                held[session_of[pk]][term] += 1
    if not held:
        return SessionMatches()
    lengths = _lengths(set(held))
    mean = sum(lengths.values()) / len(lengths)
    k1, b = rule.k1, rule.b
    score = {
        s: sum(
            useful[t] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths.get(s, 1) / mean))
            for t, tf in found.items()
        )
        for s, found in held.items()
    }
    best = sorted(score, key=lambda s: (-score[s], s))[: rule.sessions]
    top = score[best[0]]
    members: dict[str, list[int]] = defaultdict(list)
    for pk, session in session_of.items():
        if session in best:
            members[session].append(pk)
    return SessionMatches(
        strength={s: score[s] / top for s in best if math.isfinite(score[s])},
        turns={s: sorted(members[s], key=lambda pk: (-weight[pk], pk))[: rule.turns] for s in best},
    )


def session_admits(item: Scored[MemoryRow], cue: Cue, rule: Sessions) -> bool:
    """A turn a matching session lent its strength to is admitted from `admit_min_topical`, in
    its own scope only: the session, not the turn alone, carries the match."""
    if item.obj.scope != cue.scope or item.topical < rule.admit_min_topical:
        return False
    return any(name == "session_evidence" for name, _ in item.signals)
