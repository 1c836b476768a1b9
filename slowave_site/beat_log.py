"""What the embedded beat logs when it cannot send a scheduled task: one line, not a flood.

When its queue folder cannot be written (a full disk, a read-only home), Celery's beat logs
every due entry that fails (the idle-session reaper's is due every few seconds) as an error
with the whole call stack formatted into the message and the exception's traceback after it:
some sixty lines each time, for as long as the fault lasts. `BeatFaultLimit` turns such a
record into its first line (the failure itself) and lets the same line through at most once
a minute, saying how many repeats it held back. Other records pass unchanged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

INTERVAL_SECONDS = 60.0


class BeatFaultLimit(logging.Filter):
    def __init__(
        self, *, interval: float = INTERVAL_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self._interval, self._clock = interval, clock
        self._next_at: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.ERROR:
            return True
        line = record.getMessage().split("\n", 1)[0].strip()
        now = self._clock()
        if now < self._next_at.get(line, 0.0):
            self._held[line] = self._held.get(line, 0) + 1
            return False
        self._next_at[line] = now + self._interval
        held = self._held.pop(line, 0)
        record.msg = f"beat: {line}" + (f" ({held} repeats held back)" if held else "")
        record.args = None
        record.exc_info = record.exc_text = record.stack_info = None
        return True


def limit_beat_faults() -> None:
    logging.getLogger("celery.beat").addFilter(BeatFaultLimit())
