"""The project's app config: binds the Celery app once Django's apps are loaded."""

from __future__ import annotations

from django.apps import AppConfig


class SlowaveSiteConfig(AppConfig):
    name = "slowave_site"

    def ready(self) -> None:
        # Tasks and `enqueue_consolidation` use Celery's current app: it must be ours
        # (its broker and eager mode) in every process that has Django, not only the worker's.
        import slowave_site.celery  # noqa: F401
