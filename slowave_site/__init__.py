"""Slowave's Django project package.

The Celery app (spec §8.5) is loaded when Django's apps are ready (slowave_site.apps), so
tasks bind to it wherever Django runs, and not on import: a hook answered by a running server
imports this package without starting Django or Celery (slowave_site.cli).
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "celery_app":
        from slowave_site.celery import app

        return app
    raise AttributeError(f"module 'slowave_site' has no attribute {name!r}")
