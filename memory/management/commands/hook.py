"""`slowave hook session-start|prompt|stop`: a Claude Code or Codex hook (JSON on stdin,
context on stdout). The `slowave` script runs hooks itself (slowave_site.cli: over HTTP when a
server answers, else the services after django.setup, inside the guard that keeps a hook from
ever breaking the client: a hard timeout, one line on stderr, exit 0); this command serves
`manage.py hook`, the usage and --help."""

from __future__ import annotations

import sys
from typing import Any

from django.utils import timezone

from memory.management.commands._common import SlowaveCommand
from memory.services.hooks import HOOK_EVENTS, hook_run


class Command(SlowaveCommand):
    help = (
        "Run a Claude Code or Codex hook: session-start (SessionStart), prompt "
        "(UserPromptSubmit), stop (Claude Code's Stop, SessionEnd, PreCompact; Codex's "
        "Stop). Reads the hook's JSON on stdin; what it prints reaches the model. `slowave "
        "setup claude-code|codex --hooks` writes them."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("event", choices=HOOK_EVENTS)

    def handle(self, *args: Any, **options: Any) -> None:
        text = hook_run(event=options["event"], raw=sys.stdin.read(), now=timezone.now())
        if text:
            self.stdout.write(text)
