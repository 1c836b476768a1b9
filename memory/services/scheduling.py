"""Hand-off of follow-up work to the background passes, after the transaction commits."""

from __future__ import annotations

import logging

from django.db import transaction

log = logging.getLogger(__name__)


def enqueue_consolidation(*, scope: str) -> None:
    """Ask the consolidation passes to run for a scope once this transaction commits.

    The Celery task is addressed by name so the memory app does not import consolidation.
    """
    transaction.on_commit(lambda: _send(scope))


def _send(scope: str) -> None:
    try:
        from slowave_site.celery import app
    except ImportError:
        return
    try:
        app.send_task("consolidation.run_passes", kwargs={"scope": scope, "triggered_by": "commit"})
    except Exception:  # a missing broker must never fail the user's call
        log.warning("could not enqueue consolidation for %s", scope, exc_info=True)
