"""Slowave's Django project package; loads the Celery app so tasks bind to it (spec §8.5)."""

from slowave_site.celery import app as celery_app

__all__ = ("celery_app",)
