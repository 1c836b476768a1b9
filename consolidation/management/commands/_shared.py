"""Helpers shared by the pass commands: request time, running passes, printing results."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from consolidation.services.runs import PassResult
from memory.services.holders import store_hold

NOTES = {
    "covered": "skipped: a run that started after this request already did the work",
    "busy": "skipped: another worker still holds this pass",
}


class PassCommand(BaseCommand):
    """A command that runs passes: registered as a user of the store while it runs, so
    `slowave restore` refuses meanwhile (between two passes no lease shows it)."""

    def execute(self, *args: Any, **options: Any) -> Any:
        with store_hold(role=f"slowave {type(self).__module__.rsplit('.', 1)[-1]}"):
            return super().execute(*args, **options)


def process_started_at() -> datetime:
    """When this process started: the moment the work was asked for.

    Two workers launched together thus share (almost) one request time, so whichever runs a pass
    second finds it covered instead of running it again. Falls back to now off Linux.
    """
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        started_ticks = int(fields[19])  # field 22, starttime, in clock ticks after boot
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        age = uptime - started_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return timezone.now()
    return timezone.now() - timedelta(seconds=max(0.0, age))


def report(command: BaseCommand, results: list[PassResult], *, as_json: bool) -> None:
    """Print what each pass did; raise CommandError (exit 1) if any pass failed."""
    failed = [r for r in results if r.status == "failed"]
    if as_json:
        command.stdout.write(
            json.dumps({"ok": not failed, "passes": [r.as_dict() for r in results]}, indent=2)
        )
    else:
        width = max((len(r.name) for r in results), default=0)
        for r in results:
            detail = " ".join(f"{k}={v}" for k, v in r.counts.items()) or NOTES.get(
                r.status, r.error
            )
            command.stdout.write(f"{r.name:<{width}}  {r.status:<9}  {r.seconds:7.2f}s  {detail}")
    if failed:
        raise CommandError("failed: " + "; ".join(f"{r.name}: {r.error}" for r in failed))
