from __future__ import annotations

from datetime import datetime
from typing import Any

from memory.schemas import RecallIn


def retrieval_recall(*, data: RecallIn, now: datetime) -> dict[str, Any]:
    raise NotImplementedError
