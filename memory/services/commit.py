from __future__ import annotations

from datetime import datetime
from typing import Any

from memory.schemas import CommitIn


def session_commit(*, data: CommitIn, now: datetime) -> dict[str, Any]:
    raise NotImplementedError
