"""`slowave worker [--once] [--beat] [--json]`: the background passes (spec §8.3, §8.5, §11)."""

from __future__ import annotations

from consolidation.management.commands._shared import PassCommand, passes_run_shown, report
from consolidation.scheduler import embedded_mode, worker_argv
from consolidation.services.passes import ALL_PASSES
from slowave_site.celery import app


class Command(PassCommand):
    help = (
        "Run a Celery worker for the background passes, or with --once run every pass (1-10) "
        "inline once, print what each did, and exit."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--once", action="store_true", help="run passes 1-10 inline once, then exit"
        )
        parser.add_argument(
            "--beat",
            action="store_true",
            help="embed the beat scheduler (always on in embedded mode: nothing else runs it)",
        )
        parser.add_argument(
            "--json", action="store_true", help="machine-readable output (with --once)"
        )
        parser.add_argument("--loglevel", default="INFO", help="Celery log level (default INFO)")

    def handle(self, *args, **options) -> None:
        if options["once"]:
            results = passes_run_shown(specs=ALL_PASSES, scope=None, as_json=options["json"])
            report(self, results, as_json=options["json"])
            return
        beat = options["beat"] or embedded_mode()
        app.worker_main(argv=worker_argv(beat=beat, loglevel=options["loglevel"]))
