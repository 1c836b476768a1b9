"""Scheduling (spec §8.5): Celery settings, the beat schedule, and the embedded worker process.

Embedded mode (SLOWAVE_BROKER_URL unset): Celery's filesystem transport under
SLOWAVE_BROKER_DIR, polled every 0.1 s, a file:// result store, and one worker with embedded beat
that `slowave up` starts beside the web server (`start_embedded_worker`). Broker mode
(SLOWAVE_BROKER_URL=redis://...): workers and beat are started as separate services instead.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from celery.schedules import crontab
from django.conf import settings

POLL_SECONDS = 0.1
DECAY_AT = crontab(hour=3, minute=15)  # daily, UTC (the app's timezone)


def embedded_mode() -> bool:
    return not settings.SLOWAVE_BROKER_URL


def broker_folders() -> dict[str, Path]:
    base = Path(settings.SLOWAVE_BROKER_DIR)
    return {
        "queue": base / "queue",
        "control": base / "control",
        "processed": base / "processed",
        "results": base / "results",
    }


def _ensure_folders() -> dict[str, Path]:
    folders = broker_folders()
    for path in folders.values():
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folders


def beat_schedule() -> dict[str, dict[str, Any]]:
    # Runs from an embedded beat are attributed to "embedded", from a separate beat to "beat".
    who = {"triggered_by": "embedded" if embedded_mode() else "beat"}
    schedule: dict[str, dict[str, Any]] = {
        "consolidate": {
            "task": "consolidation.run_passes",
            "kwargs": who,
            "schedule": float(settings.SLOWAVE_CONSOLIDATE_INTERVAL),
        },
        "decay": {"task": "consolidation.decay_unused", "kwargs": who, "schedule": DECAY_AT},
    }
    if settings.SLOWAVE_SESSION_IDLE_TIMEOUT > 0:
        schedule["reap"] = {
            "task": "consolidation.reap_sessions",
            "kwargs": who,
            "schedule": max(float(settings.SLOWAVE_REAPER_POLL_SECONDS), 1.0),
        }
    return schedule


def celery_settings() -> dict[str, Any]:
    """Settings layered over the CELERY_* ones from the Django settings module."""
    conf: dict[str, Any] = {
        "timezone": "UTC",
        "enable_utc": True,
        "beat_schedule": beat_schedule(),
        "worker_prefetch_multiplier": 1,
        "broker_connection_retry_on_startup": True,
        # Enqueueing happens inside agents' calls (after commit): an unreachable broker must cost
        # them well under a second, not Celery's default retry schedule.
        "task_publish_retry_policy": {
            "max_retries": 2,
            "interval_start": 0,
            "interval_step": 0.2,
            "interval_max": 0.4,
        },
        "beat_schedule_filename": str(Path(settings.SLOWAVE_BROKER_DIR) / "beat-schedule"),
    }
    if embedded_mode():
        folders = _ensure_folders()
        conf.update(
            {
                "broker_url": "filesystem://",
                "broker_transport_options": {
                    "data_folder_in": str(folders["queue"]),
                    "data_folder_out": str(folders["queue"]),
                    "control_folder": str(folders["control"]),
                    "processed_folder": str(folders["processed"]),
                    "store_processed": False,
                    "polling_interval": POLL_SECONDS,
                },
                "result_backend": f"file://{folders['results']}",
                # Remote control needs a fanout queue per worker; on the filesystem transport
                # those of stopped workers would collect broadcast files forever.
                "worker_enable_remote_control": False,
            }
        )
    return conf


def worker_argv(*, beat: bool, loglevel: str = "INFO") -> list[str]:
    """`celery worker` arguments: one process (the embedding model is loaded once), gossip and
    mingle off (nothing to gossip with on the filesystem transport)."""
    argv = [
        "worker",
        f"--loglevel={loglevel}",
        "--concurrency=1",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    return [*argv, "--beat"] if beat else argv


def start_embedded_worker(
    *, stdout: Any = None, stderr: Any = None, verbose: bool = True
) -> subprocess.Popen[bytes] | None:
    """Start `celery -A slowave_site worker --beat` as a child process for `slowave up`.

    Returns None when there is nothing to start: broker mode (workers and beat are their own
    services there) or SLOWAVE_EMBEDDED_WORKER=false. Stop it with `stop_worker`. Not
    `verbose`: no banner and warnings only (`slowave up` prints its own start block).
    """
    if not embedded_mode() or not settings.SLOWAVE_EMBEDDED_WORKER:
        return None
    _ensure_folders()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "slowave_site.settings"),
    }
    quiet = [] if verbose else ["--quiet"]
    argv = worker_argv(beat=True, loglevel="INFO" if verbose else "WARNING")
    command = [sys.executable, "-m", "celery", "-A", "slowave_site", *quiet, *argv]
    # Its own process group, so stop_worker reaches the pool child too and nothing is orphaned.
    return subprocess.Popen(
        command,
        cwd=str(settings.BASE_DIR),
        env=env,
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,
    )


def stop_worker(process: subprocess.Popen[bytes], *, timeout: float = 15.0) -> int:
    """Warm shutdown (SIGTERM lets the current task finish), then SIGKILL after `timeout`."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process.pid)
            process.wait()
    return process.returncode


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
