"""Public identifiers (spec §2): prefixes, generation and parsing."""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import datetime
from typing import overload

MEMORY_ID_RE = re.compile(r"^sch_([0-9]+)$")
# Primary keys are signed 64-bit integers, at most 19 digits. A longer number names no row, as
# any number past the range does (Django's lookups find nothing for it), and is not converted:
# int() refuses strings of more than 4,300 digits with a ValueError.
PK_DIGITS_MAX = 19
PAST_ANY_PK = 2**63


def new_session_id() -> str:
    return f"sess_{secrets.token_hex(8)}"


def new_retrieval_id(kind: str) -> str:
    prefix = "ctx" if kind == "activate" else "rec"
    return f"{prefix}_{secrets.token_hex(6)}"


def new_continuity_id() -> str:
    return f"cont_{secrets.token_urlsafe(32)}"


def new_feedback_id() -> str:
    return f"fbe_{secrets.token_hex(16)}"


def cursor_id(retrieval_id: str, memory_offset: int, procedure_offset: int) -> str:
    raw = f"{retrieval_id}:{memory_offset}:{procedure_offset}".encode()
    return "cur_" + hashlib.sha256(raw).hexdigest()[:32]


def procedure_id(session_id: str) -> str:
    return f"proc_{session_id}"


def procedure_index_key(session_id: str) -> int:
    digest = hashlib.sha256(session_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") & ((1 << 63) - 1)


def memory_pk(public_id: str) -> int | None:
    match = MEMORY_ID_RE.match(public_id or "")
    if match is None:
        return None
    digits = match.group(1).lstrip("0") or "0"
    return int(digits) if len(digits) <= PK_DIGITS_MAX else PAST_ANY_PK


def memory_ref(pk: int) -> str:
    return f"sch_{pk}"


@overload
def epoch(value: datetime) -> int: ...
@overload
def epoch(value: datetime | None) -> int | None: ...
def epoch(value: datetime | None) -> int | None:
    return None if value is None else int(value.timestamp())
