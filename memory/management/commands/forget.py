"""`slowave forget sch_N --reason TEXT` (also `proc_…`): suppress from every retrieval."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from memory.management.commands._common import SlowaveCommand, actor_name
from memory.services.forgetting import control_forget


class Command(SlowaveCommand):
    help = "Suppress a memory (sch_N) or procedure (proc_…) from agents; reversible with unforget."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("ref", help="sch_N or proc_…")
        parser.add_argument(
            "--reason", required=True, help="why (1–500 chars; kept in the forget log)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        result = control_forget(
            ref=options["ref"], reason=options["reason"], actor=actor_name(), now=timezone.now()
        )
        if self.as_json:
            self.emit({"ok": True, "data": result.as_dict()})
            return
        if result.changed:
            self.stdout.write(f"{result.ref} suppressed (was {result.prior_status}).")
        else:
            self.stdout.write(f"{result.ref} was already forgotten; nothing changed.")
        for warning in result.warnings:
            self.stderr.write(f"warning: {warning}")
