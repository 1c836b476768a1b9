"""Shared plumbing for Slowave's own commands: `--json`, error mapping, progress bars.

Commands stay thin: parse, call a service or selector, print. A SlowaveError becomes a
CommandError (exit 1); argparse usage errors exit 2.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any, TextIO, cast

from django.core.management.base import BaseCommand, CommandError, OutputWrapper
from django.core.serializers.json import DjangoJSONEncoder

from memory.errors import SlowaveError
from memory.management.terminal import PrintableConsole, PrintableOutput
from memory.services.holders import store_hold


class SlowaveCommand(BaseCommand):
    # Registered as a user of the store while it runs, so `slowave restore` refuses meanwhile.
    holds_store = True

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> Any:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.add_argument(
            "--json",
            action="store_true",
            dest="as_json",
            help="machine-readable output on stdout (no colour, no progress)",
        )
        return parser

    def execute(self, *args: Any, **options: Any) -> Any:
        self.as_json = bool(options.get("as_json"))
        if options.get("stdout"):
            self.stdout = OutputWrapper(options.pop("stdout"))
        # Human-facing output never carries a stored text's control characters raw.
        self._stream = cast(TextIO, self.stdout._out)
        if not self.as_json:
            self.stdout = PrintableOutput(self._stream)
        try:
            if not self.holds_store:
                return super().execute(*args, **options)
            with store_hold(role=f"slowave {self._command_name()}"):
                return super().execute(*args, **options)
        except SlowaveError as exc:
            if self.as_json:
                self.emit({"ok": False, "error": exc.as_error()})
            raise CommandError(exc.message) from None

    def _command_name(self) -> str:
        return type(self).__module__.rsplit(".", 1)[-1]

    def emit(self, data: Any) -> None:
        self.stdout.write(json.dumps(data, cls=DjangoJSONEncoder, ensure_ascii=False, indent=2))

    def console(self) -> Any:
        stream = getattr(self, "_stream", self.stdout)
        return PrintableConsole(file=cast(IO[str], stream), highlight=False, soft_wrap=True)

    @contextmanager
    def progress(
        self, description: str, total: int | None = None
    ) -> Iterator[Callable[[int], None]]:
        """An `advance(n)` callback drawing a bar on stderr when it is a terminal, else silent."""
        if self.as_json or not sys.stderr.isatty():

            def silent(n: int = 1) -> None:
                return None

            yield silent
            return
        from rich.progress import Progress

        with Progress(transient=True) as bar:
            task = bar.add_task(description, total=total)

            def advance(n: int = 1) -> None:
                bar.advance(task, n)

            yield advance


def actor_name() -> str:
    """Who did it, for the forget log: the operating-system user running the CLI."""
    import getpass

    try:
        return f"cli:{getpass.getuser()}"
    except Exception:  # no passwd entry in some containers
        return "cli"
