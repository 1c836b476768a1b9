"""The embedded beat says in one line, once a minute, that it cannot send a task (issue 26).

Its queue folder unwritable (a full disk, a read-only home), Celery's beat logged every due
entry that failed with the formatted call stack and the traceback: about sixty lines a tick,
and the reaper's entry is due every few seconds. Here a real beat scheduler sends through the
filesystem transport into a queue "folder" that is a file, so every send fails for real.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from celery import Celery
from celery.beat import ScheduleEntry, Scheduler

from slowave_site.celery import app as slowave_app


def _failing_app(tmp_path: Path) -> Celery:
    blocked = tmp_path / "queue"
    blocked.write_text("not a folder")  # no message file can be made inside it
    app = Celery("beat-faults", set_as_current=False)
    app.conf.update(
        broker_url="filesystem://",
        broker_transport_options={
            "data_folder_in": str(blocked),
            "data_folder_out": str(blocked),
            "control_folder": str(tmp_path),
        },
        task_publish_retry_policy={"max_retries": 0},
    )
    return app


def test_a_failing_send_is_one_line_and_repeats_are_held_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    assert slowave_app.conf.broker_url  # configured, our app has put its limit on celery.beat
    app = _failing_app(tmp_path)
    scheduler = Scheduler(app=app, lazy=True)
    entry = ScheduleEntry(name="reap", task="consolidation.reap_idle", schedule=1.0, app=app)
    with caplog.at_level(logging.INFO, logger="celery.beat"):
        for _ in range(5):
            scheduler.apply_entry(entry, producer=scheduler.producer)
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, [r.getMessage() for r in errors]
    [line] = errors[0].getMessage().splitlines()
    assert line.startswith("beat: Message Error: Couldn't apply scheduled task reap"), line
    assert errors[0].exc_info is None
    text = caplog.text
    assert "Traceback" not in text and "format_stack" not in text, text
