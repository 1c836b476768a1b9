"""Hand-off of follow-up work to the background passes, after the transaction commits."""

from __future__ import annotations

import logging

from celery import current_app
from django.db import transaction
from django.utils import timezone

log = logging.getLogger(__name__)


def enqueue_consolidation(*, scope: str) -> None:
    """Ask the consolidation passes to run for a scope once this transaction commits.

    The Celery task is addressed by name so the memory app does not import consolidation, and
    the Celery app is the current one (slowave_site's, set up with Django) so it does not
    import slowave_site either.
    """
    transaction.on_commit(lambda: _send(scope))


def _send(scope: str) -> None:
    app = current_app
    # requested_at: stamped after the commit, so a pass run that starts later is known to cover it.
    kwargs = {"scope": scope, "triggered_by": "commit", "requested_at": timezone.now().isoformat()}
    try:
        if app.conf.task_always_eager:  # SLOWAVE_TASKS_INLINE: send_task would ignore it
            app.loader.import_default_modules()  # registers autodiscovered tasks, as a worker does
            app.tasks["consolidation.run_passes"].apply(kwargs=kwargs)
        else:
            app.send_task("consolidation.run_passes", kwargs=kwargs)
    except Exception:  # a missing broker must never fail the user's call
        log.warning("could not enqueue consolidation for %s", scope, exc_info=True)
