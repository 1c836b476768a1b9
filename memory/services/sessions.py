"""Session lifecycle: open (activate), checks for later calls, events, and the idle reaper."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class ClientInfo:
    name: str = ""
    version: str = ""
    identity: str = ""


def session_reap_idle(*, now: datetime, timeout_seconds: float | None = None) -> list[str]:
    raise NotImplementedError
