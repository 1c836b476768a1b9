"""Typed loader for LoCoMo-layout JSON files (spec §13.1).

The benchmark data is never shipped with Slowave: callers pass the path of a file such as the
upstream ``data/locomo10.json``. Only the fields the benchmark needs are kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from slowave_site.bench.data_file import load_records

SESSION_KEY_RE = re.compile(r"^session_(\d+)$")
DATE_FORMAT = "%I:%M %p on %d %B, %Y"
# Gold evidence ids in the upstream file are occasionally malformed ("D8:6; D9:17", "D:11:26",
# "D 3:4", a bare "D"); this pulls every well-formed D<session>:<turn> out of such a string.
_EVIDENCE_RE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)", re.IGNORECASE)


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    session: int
    occurred_at: datetime | None
    blip_caption: str | None = None

    @property
    def content(self) -> str:
        """The text a turn is remembered or indexed as (spec §13.1 step 2)."""
        body = f"{self.speaker}: {self.text}"
        if self.blip_caption:
            body += f" [image: {self.blip_caption}]"
        return body


@dataclass(frozen=True)
class Session:
    index: int
    occurred_at: datetime | None
    raw_date_time: str
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Question:
    sample_id: str
    index: int  # position in the sample's qa list, stable for per-question rows
    question: str
    answer: str | None
    adversarial_answer: str | None
    evidence: tuple[str, ...]  # normalised, de-duplicated, file order
    raw_evidence: tuple[str, ...]
    category: int

    @property
    def is_adversarial(self) -> bool:
        return self.category == 5

    @property
    def key(self) -> str:
        return f"{self.sample_id}#{self.index}"


@dataclass(frozen=True)
class Sample:
    sample_id: str
    speaker_a: str
    speaker_b: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]
    turn_by_dia_id: dict[str, Turn] = field(default_factory=dict, compare=False, repr=False)

    @property
    def turns(self) -> list[Turn]:
        return [turn for session in self.sessions for turn in session.turns]


def parse_session_date(value: str | None) -> datetime | None:
    """``1:56 pm on 8 May, 2023`` -> aware UTC datetime; None when absent or unparseable."""
    if not value or not isinstance(value, str):
        return None
    # strptime matches %p and %B case-insensitively; only whitespace needs normalising.
    text = " ".join(value.split())
    text = re.sub(r"\s*,\s*", ", ", text)
    try:
        return datetime.strptime(text, DATE_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        return None


def normalise_evidence(raw: Any) -> tuple[str, ...]:
    """Gold evidence ids as canonical ``D<n>:<m>`` strings, de-duplicated in order."""
    if raw is None:
        return ()
    values = raw if isinstance(raw, list) else [raw]
    out: list[str] = []
    for value in values:
        for session, turn in _EVIDENCE_RE.findall(str(value)):
            dia_id = f"D{int(session)}:{int(turn)}"
            if dia_id not in out:
                out.append(dia_id)
    return tuple(out)


def normalise_dia_id(value: str) -> str:
    ids = normalise_evidence(value)
    return ids[0] if ids else str(value).strip()


def _optional_text(value: Any) -> str | None:
    return None if value is None else str(value)


def _parse_sample(raw: dict[str, Any]) -> Sample:
    sample_id = str(raw["sample_id"])
    conversation = raw["conversation"]
    sessions: list[Session] = []
    numbers = sorted(int(m.group(1)) for key in conversation if (m := SESSION_KEY_RE.match(key)))
    for n in numbers:
        raw_date = conversation.get(f"session_{n}_date_time") or ""
        occurred_at = parse_session_date(raw_date)
        turns = tuple(
            Turn(
                dia_id=normalise_dia_id(t["dia_id"]),
                speaker=str(t["speaker"]),
                text=str(t.get("text", "")),
                session=n,
                occurred_at=occurred_at,
                blip_caption=(t.get("blip_caption") or None),
            )
            for t in conversation[f"session_{n}"] or []
        )
        sessions.append(
            Session(index=n, occurred_at=occurred_at, raw_date_time=raw_date, turns=turns)
        )
    questions = tuple(
        Question(
            sample_id=sample_id,
            index=i,
            question=str(q["question"]),
            answer=_optional_text(q.get("answer")),
            adversarial_answer=_optional_text(q.get("adversarial_answer")),
            evidence=normalise_evidence(q.get("evidence")),
            raw_evidence=tuple(str(e) for e in q.get("evidence") or []),
            category=int(q["category"]),
        )
        for i, q in enumerate(raw.get("qa") or [])
    )
    turn_by_id = {turn.dia_id: turn for s in sessions for turn in s.turns}
    return Sample(
        sample_id=sample_id,
        speaker_a=str(conversation.get("speaker_a", "")),
        speaker_b=str(conversation.get("speaker_b", "")),
        sessions=tuple(sessions),
        questions=questions,
        turn_by_dia_id=turn_by_id,
    )


def load_locomo(path: str | Path) -> list[Sample]:
    """Every sample of a LoCoMo-layout file (a JSON list, or a single sample object)."""
    return load_records(path, layout="LoCoMo", noun="sample", parse=_parse_sample, single=True)
