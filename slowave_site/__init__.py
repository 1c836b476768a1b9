"""Slowave's Django project package.

`celery -A slowave_site` finds the Celery app in `slowave_site.celery`, and whatever sends a
task imports that module itself; importing Celery here would cost every process (each agent
window's `mcp_serve` among them) ~0.3 s at start for an app most of them never use.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "celery_app":  # the name Celery's Django guide uses
        from slowave_site.celery import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
