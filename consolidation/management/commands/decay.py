"""`slowave decay [--now ISO] [--dry-run] [--json]`: salience decay of unused memories (§8.4)."""

from __future__ import annotations

import json
from datetime import datetime

from django.core.management.base import CommandError

from consolidation.management.commands._shared import PassCommand, process_started_at, report
from consolidation.services.decay import decay_plan
from consolidation.services.passes import DECAY, passes_run


def _parse_now(value: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise CommandError(
            f"--now must be an RFC 3339 timestamp, e.g. 2026-01-31T03:15:00Z: {value}"
        ) from exc
    if parsed.tzinfo is None:
        raise CommandError(f"--now must include a UTC offset (e.g. Z or +02:00): {value}")
    return parsed


class Command(PassCommand):
    help = (
        "Decay the salience of memories unused for SLOWAVE_DECAY_IDLE_DAYS "
        "(half-life SLOWAVE_DECAY_HALF_LIFE_DAYS)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--now", help="decay as of this RFC 3339 time instead of the clock")
        parser.add_argument(
            "--dry-run", action="store_true", help="list what would change; write nothing"
        )
        parser.add_argument("--json", action="store_true", help="machine-readable output")

    def handle(self, *args, **options) -> None:
        now = _parse_now(options["now"]) if options["now"] else None
        if options["dry_run"]:
            self._dry_run(now, options["json"])
            return
        # An explicit --now is a deliberate run: never skip it as covered by a clock-time run.
        results = passes_run(
            specs=(DECAY,),
            scope=None,
            triggered_by="cli",
            now=now,
            requested_at=None if now else process_started_at(),
        )
        report(self, results, as_json=options["json"])

    def _dry_run(self, now: datetime | None, as_json: bool) -> None:
        from django.utils import timezone

        plan = decay_plan(now=now or timezone.now())
        if as_json:
            self.stdout.write(
                json.dumps(
                    {
                        "ok": True,
                        "dry_run": True,
                        "would_decay": len(plan),
                        "changes": [c.as_dict() for c in plan],
                    },
                    indent=2,
                )
            )
            return
        for change in plan:
            self.stdout.write(
                f"sch_{change.memory_id}  {change.salience:.4f} -> {change.new_salience:.4f}"
            )
        self.stdout.write(f"would decay {len(plan)} memories (dry run: nothing written)")
