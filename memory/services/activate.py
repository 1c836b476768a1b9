from __future__ import annotations

from datetime import datetime
from typing import Any

from memory.schemas import ActivateIn
from memory.services.sessions import ClientInfo


def session_activate(*, data: ActivateIn, client: ClientInfo, now: datetime) -> dict[str, Any]:
    raise NotImplementedError
