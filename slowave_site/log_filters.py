"""Logging filters that keep `slowave up`'s console to one line per event."""

from __future__ import annotations

import logging

QUIET_STATUSES = frozenset({403})


class OneLineRefusal(logging.Filter):
    """A refused request (403, e.g. a viewer pressing Suppress) is an ordinary answer, not a
    fault: Django's request logger attaches the PermissionDenied traceback; drop it, keep the
    line ("Forbidden (Permission denied): /admin/…")."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) in QUIET_STATUSES:
            record.exc_info = None
            record.exc_text = None
        return True
