"""`slowave reap [--json]`: close idle sessions now (spec §6.8, pass 10)."""

from __future__ import annotations

from consolidation.management.commands._shared import PassCommand, process_started_at, report
from consolidation.services.passes import REAPER, passes_run


class Command(PassCommand):
    help = (
        "Close sessions idle for longer than SLOWAVE_SESSION_IDLE_TIMEOUT through the commit path."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--json", action="store_true", help="machine-readable output")

    def handle(self, *args, **options) -> None:
        results = passes_run(
            specs=(REAPER,), scope=None, triggered_by="cli", requested_at=process_started_at()
        )
        report(self, results, as_json=options["json"])
