"""How much `mcp_serve` writes to stderr: a start line, then at most one routine line a minute.

An agent's client shows the server's stderr as its log, one server per agent window, so
routine lines (INFO and below: reaped sessions, applied migrations) are limited to one per
`INTERVAL_SECONDS`; the next line that passes says how many were held back. Warnings and
errors always pass: something went wrong and the person should see it.
Does not live here: what is logged (each module's own logger), the log level (settings).
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable

INTERVAL_SECONDS = 60.0


class RoutineLineLimit(logging.Filter):
    def __init__(
        self, *, interval: float = INTERVAL_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self._interval, self._clock = interval, clock
        self._next_at = 0.0
        self._held = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING:
            return True
        now = self._clock()
        if now < self._next_at:
            self._held += 1
            return False
        self._next_at = now + self._interval
        if self._held:
            record.msg = f"{record.getMessage()} ({self._held} routine lines held back)"
            record.args = None
            self._held = 0
        return True


def limit_routine_lines() -> None:
    """Put one limit on every handler of the root logger (settings.LOGGING's stderr handler)."""
    limit = RoutineLineLimit()
    for handler in logging.getLogger().handlers:
        handler.addFilter(limit)


def say(line: str) -> None:
    """One line on stderr, prefixed as the agent's log shows it came from us."""
    sys.stderr.write(f"mcp_serve: {line}\n")
    sys.stderr.flush()
