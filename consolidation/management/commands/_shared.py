"""Helpers shared by the pass commands: request time, running passes, printing results."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from consolidation.services.passes import passes_run
from consolidation.services.runs import PassResult, PassSpec
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


def passes_run_shown(
    *, specs: tuple[PassSpec, ...], scope: str | None, as_json: bool
) -> list[PassResult]:
    """`passes_run` for a command, one pass at a time under a progress bar on stderr (only
    when it is a terminal and the output is not JSON): a backfill of many rows takes a while."""
    requested_at = process_started_at()
    results: list[PassResult] = []
    with _bar(len(specs), shown=not as_json and sys.stderr.isatty()) as step:
        for spec in specs:
            step(spec.name)
            results += passes_run(
                specs=(spec,), scope=scope, triggered_by="cli", requested_at=requested_at
            )
    return results


@contextmanager
def _bar(total: int, *, shown: bool) -> Iterator[Any]:
    if not shown:
        yield lambda name: None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("Passes", total=total)
        started = [False]

        def step(name: str) -> None:
            if started[0]:
                progress.advance(task)
            started[0] = True
            progress.update(task, description=f"Pass {name}", refresh=True)

        yield step
        progress.advance(task)
