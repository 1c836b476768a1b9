"""The Celery app (spec §8.5): `celery -A slowave_site worker|beat`.

Broker: SLOWAVE_BROKER_URL (e.g. redis://) or, unset, the filesystem transport under
SLOWAVE_BROKER_DIR, so the default install needs no extra service. Transport folders, result
store and beat schedule come from consolidation.scheduler once Django settings are readable.
"""

from __future__ import annotations

import logging
import os
import warnings
from typing import Any

from celery import Celery
from celery.signals import worker_init

from consolidation.scheduler import celery_settings, embedded_mode
from slowave_site.env import settings_or_exit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "slowave_site.settings")

app = Celery("slowave_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.on_configure.connect
def _check_settings(sender: Celery, **kwargs: Any) -> None:
    # Sent before Celery first reads the Django settings (`celery -A slowave_site worker|beat`
    # does so while parsing its options): a malformed variable ends it with one line, status 2.
    settings_or_exit()


@app.on_after_configure.connect
def _configure(sender: Celery, **kwargs: Any) -> None:
    sender.conf.update(celery_settings())
    if embedded_mode():
        _quiet_embedded_noise()


def _quiet_embedded_noise() -> None:
    """Two warnings every start of the embedded worker would print that ask nothing of anyone:
    kombu's filesystem transport has no host name to be given, and `slowave up` offers no
    --uid to drop root with (its worker runs as whoever runs `slowave up`). And the beat's
    failures to send a task: one line a minute, not sixty lines a tick (slowave_site.beat_log)."""
    from celery.exceptions import SecurityWarning

    from slowave_site.beat_log import limit_beat_faults

    limit_beat_faults()
    warnings.filterwarnings("ignore", category=SecurityWarning)
    logging.getLogger("kombu.connection").addFilter(
        lambda record: not record.getMessage().startswith("No hostname was supplied")
    )


@worker_init.connect
def _hold_store(**kwargs: Any) -> None:
    # A worker uses the store for as long as it runs (its pool children inherit the lock):
    # registered, `slowave restore` refuses to replace the store under it. Imported here: it
    # imports models, and this module is loaded before Django's apps are.
    from memory.services.holders import store_register

    store_register(role="celery worker")


@worker_init.connect
def _record_metrics(**kwargs: Any) -> None:
    # Under `slowave up` (which names the run's metrics folder) the embedded worker's passes
    # and embeddings count at /metrics; a worker started on its own keeps no metrics.
    from slowave_site.metrics import install_metrics, multiprocess_dir

    if multiprocess_dir():
        install_metrics()
