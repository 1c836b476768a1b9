"""`slowave unforget sch_N` (also `proc_…`): restore the status it had before forgetting."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from memory.management.commands._common import SlowaveCommand, actor_name
from memory.services.forgetting import control_unforget


class Command(SlowaveCommand):
    help = "Restore a forgotten memory (sch_N) or procedure (proc_…) to its prior status."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("ref", help="sch_N or proc_…")
        parser.add_argument("--reason", default="", help="optional note for the forget log")

    def handle(self, *args: Any, **options: Any) -> None:
        result = control_unforget(
            ref=options["ref"], actor=actor_name(), now=timezone.now(), reason=options["reason"]
        )
        if self.as_json:
            self.emit({"ok": True, "data": result.as_dict()})
        else:
            self.stdout.write(f"{result.ref} restored to {result.new_status}.")
