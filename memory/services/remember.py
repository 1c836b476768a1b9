from __future__ import annotations

from datetime import datetime
from typing import Any

from memory.schemas import RememberIn


def memory_remember(*, data: RememberIn, now: datetime) -> dict[str, Any]:
    raise NotImplementedError
