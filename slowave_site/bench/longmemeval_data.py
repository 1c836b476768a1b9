"""Typed loader for LongMemEval files (official ``longmemeval_s`` layout) and the scored filter.

The data is never shipped with Slowave: callers pass the path of a file such as
``longmemeval_s.json``. Each question carries its own haystack of dated chat sessions; this module
turns them into frozen dataclasses, cuts the turns into the documents every method indexes (the
same ones for Slowave and the baselines) and decides which questions the retrieval protocol
scores. Metrics live in longmemeval_metrics.py, Slowave's side in longmemeval_slowave.py.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from slowave_site.bench.data_file import load_records

# Which turns are indexed (and count as evidence): the official protocol indexes user turns.
ROLES: dict[str, tuple[str, ...]] = {"user": ("user",), "both": ("user", "assistant")}
CONTENT_LIMIT = 8_000  # a memory's content limit (spec §14)
# "2023/05/20 (Sat) 02:21": the weekday in brackets is redundant and ignored.
_SPACE_RE = re.compile(r"\s")
_DATE_RE = re.compile(
    r"^\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\([A-Za-z]+\))?\s*(\d{1,2}):(\d{2})\s*$"
)


@dataclass(frozen=True)
class Turn:
    key: str  # "<session_id>#<index in the session>", stable across runs
    session_id: str
    index: int
    role: str
    content: str
    has_answer: bool


@dataclass(frozen=True)
class HaystackSession:
    session_id: str
    occurred_at: datetime
    raw_date: str
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Document:
    """What a method indexes: a turn, or one ≤8,000-char chunk of a longer one."""

    text: str
    turn: Turn
    occurred_at: datetime


@dataclass(frozen=True)
class Question:
    question_id: str
    question_type: str
    question: str
    answer: str
    question_date: datetime
    sessions: tuple[HaystackSession, ...]  # file order
    answer_session_ids: tuple[str, ...]

    @property
    def key(self) -> str:
        return self.question_id

    @property
    def is_abstention(self) -> bool:
        return self.question_id.endswith("_abs")

    def chronological(self) -> list[HaystackSession]:
        """Sessions by date (ties in file order): a third of the files list them unsorted."""
        return sorted(self.sessions, key=lambda s: s.occurred_at)

    def evidence_turns(self, roles: str = "user") -> tuple[str, ...]:
        """Keys of the answer sessions' ``has_answer`` turns said by an indexed role."""
        wanted, gold = ROLES[roles], set(self.answer_session_ids)
        keys = [
            t.key
            for s in self.sessions
            if s.session_id in gold
            for t in s.turns
            if t.has_answer and t.role in wanted
        ]
        return tuple(dict.fromkeys(keys))


def parse_date(value: str) -> datetime:
    """``2023/05/20 (Sat) 02:21`` -> aware UTC datetime; ValueError when it does not read so."""
    match = _DATE_RE.match(value or "")
    if match is None:
        raise ValueError(f"unreadable date {value!r} (expected e.g. '2023/05/20 (Sat) 02:21')")
    year, month, day, hour, minute = (int(g) for g in match.groups())
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def chunks(text: str, limit: int = CONTENT_LIMIT) -> list[str]:
    """The text itself when it fits, else ≤limit-char pieces cut at the last whitespace."""
    if len(text) <= limit:
        return [text]
    out: list[str] = []
    rest = text
    while len(rest) > limit:
        window = rest[: limit + 1]  # a break right after the limit still leaves ≤limit chars
        cut = max((m.start() for m in _SPACE_RE.finditer(window)), default=-1)
        cut = cut if cut > 0 else limit  # one unbroken run longer than the limit: hard cut
        out.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        out.append(rest)
    return [piece for piece in out if piece]


def documents(session: HaystackSession, roles: str = "user") -> list[Document]:
    """The session's indexed turns as documents, in turn order; blank turns hold nothing."""
    wanted = ROLES[roles]
    return [
        Document(text=piece, turn=turn, occurred_at=session.occurred_at)
        for turn in session.turns
        if turn.role in wanted and turn.content.strip()
        for piece in chunks(turn.content)
    ]


def question_documents(question: Question, roles: str = "user") -> list[Document]:
    """Every document of a question's haystack, sessions in chronological order."""
    return [d for s in question.chronological() for d in documents(s, roles)]


def is_scored(question: Question, roles: str = "user") -> bool:
    """The retrieval protocol skips abstention questions and those without evidence turns."""
    return not question.is_abstention and bool(question.evidence_turns(roles))


def _session(session_id: str, raw_date: str, raw_turns: list[dict[str, Any]]) -> HaystackSession:
    turns = tuple(
        Turn(
            key=f"{session_id}#{i}",
            session_id=session_id,
            index=i,
            role=str(t["role"]),
            content=str(t.get("content") or ""),
            has_answer=bool(t.get("has_answer")),
        )
        for i, t in enumerate(raw_turns)
    )
    return HaystackSession(session_id, parse_date(raw_date), raw_date, turns)


def _question(raw: dict[str, Any]) -> Question:
    ids, dates, sessions = (
        raw["haystack_session_ids"],
        raw["haystack_dates"],
        raw["haystack_sessions"],
    )
    if not len(ids) == len(dates) == len(sessions):
        raise ValueError("haystack ids, dates and sessions differ in length")
    return Question(
        question_id=str(raw["question_id"]),
        question_type=str(raw["question_type"]),
        question=str(raw["question"]),
        answer=str(raw.get("answer", "")),
        question_date=parse_date(raw["question_date"]),
        sessions=tuple(
            _session(str(i), d, s) for i, d, s in zip(ids, dates, sessions, strict=True)
        ),
        answer_session_ids=tuple(str(s) for s in raw.get("answer_session_ids") or ()),
    )


def load_longmemeval(path: str | Path) -> list[Question]:
    """Every question of a LongMemEval-layout file (a JSON list of questions), in file order."""
    return load_records(path, layout="LongMemEval", noun="question", parse=_question)


def select(
    questions: Sequence[Question],
    *,
    roles: str = "user",
    wanted: Sequence[str] = (),
    limit: int | None = None,
) -> list[Question]:
    """The scored questions, in file order: only ``wanted`` ids when given, then the first
    ``limit``. Asking for an id the file lacks or the protocol skips is an error, not a no-op."""
    if roles not in ROLES:
        raise ValueError(f"unknown roles {roles!r}; choose from {', '.join(ROLES)}")
    scored = [q for q in questions if is_scored(q, roles)]
    if wanted:
        held = {q.question_id: q for q in questions}
        for qid in dict.fromkeys(wanted):
            if qid not in held:
                raise ValueError(f"no question {qid!r} in the file")
            if not is_scored(held[qid], roles):
                raise ValueError(
                    f"question {qid!r} is not scored: an abstention question or one without "
                    f"evidence in {'/'.join(ROLES[roles])} turns"
                )
        scored = [q for q in scored if q.question_id in set(wanted)]
    if limit is not None:
        if limit < 1:
            raise ValueError("--limit must be positive")
        scored = scored[:limit]
    return scored
