from __future__ import annotations

from datetime import datetime
from typing import Any

from memory.schemas import FeedbackIn


def feedback_submit(*, data: FeedbackIn, now: datetime) -> dict[str, Any]:
    raise NotImplementedError
