"""`slowave up`: migrate, start the embedded Celery worker, serve the admin with uvicorn.

With `--workers N` above 1, uvicorn runs N server processes on the one port (its own
supervisor, which also restarts one that dies). Migrations, the embedded worker and beat stay
here in the parent, once; each server process registers itself as a holder of the store and
loads its own embedding model (slowave_site.asgi). On SQLite they share the file in WAL mode:
reads and embedding run side by side, writers still take turns on the busy timeout.

It prints one block (slowave_site.quiet_start) and then only warnings and errors: the Celery
banner, uvicorn's start and access lines and library progress bars come with --verbose.
"""

from __future__ import annotations

import logging
import os
import signal
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from consolidation.scheduler import start_embedded_worker, stop_worker
from memory.embedder_record import record_conflict
from memory.embeddings import get_embedder
from memory.services.holders import store_hold
from memory.services.warming import serving_warm_up_in_background
from slowave_site.metrics import prepare_multiprocess_dir
from slowave_site.quiet_start import port_taken, silence_libraries, start_block, worker_state
from slowave_site.server_process import SERVER_PROCESS_ENV, serve

log = logging.getLogger(__name__)


def _exit_on_signal(signum: int, frame: Any) -> None:
    raise SystemExit(0)


class Command(BaseCommand):
    help = "Apply migrations and serve Slowave's web interface on SLOWAVE_HOST:SLOWAVE_PORT."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--host", default=settings.SLOWAVE_HOST)
        parser.add_argument("--port", type=int, default=settings.SLOWAVE_PORT)
        parser.add_argument(
            "--no-worker", action="store_true", help="do not start the embedded background worker"
        )
        parser.add_argument(
            "--workers",
            type=int,
            default=settings.SLOWAVE_UP_WORKERS,
            help="server processes, each with its own thread pool and embedding model "
            "(default SLOWAVE_UP_WORKERS, 1)",
        )
        parser.add_argument(
            "--verbose",
            action="store_true",
            help="also show the worker's banner and log, the web server's start and access "
            "lines, and library progress bars",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        # Registered first, so `slowave restore` refuses while this serves (or migrates).
        with store_hold(role="slowave up"):
            self._serve(**options)

    def _serve(self, **options: Any) -> None:
        workers = options["workers"]
        if workers < 1:
            raise CommandError(f"--workers must be at least 1, got {workers}")
        host, port = options["host"], options["port"]
        # Before anything starts (or the metrics of a server already on that port are wiped).
        taken = port_taken(host, port)
        if taken:
            raise CommandError(f"cannot listen on {host}:{port}: {taken} (choose another --port)")
        verbose = options["verbose"]
        if not verbose:
            silence_libraries()
        # Before any process that records starts (slowave_site.metrics: why multiprocess).
        prepare_multiprocess_dir(settings.SLOWAVE_HOME / "metrics")
        call_command("migrate", verbosity=0)
        conflict = record_conflict(get_embedder())  # the configured embedder, not loaded
        if conflict is not None:
            raise CommandError(conflict)
        # The model loads and the vector copy catches up beside the server, not inside the
        # first request (mcp_serve's warm-up); on the first start of an installation that
        # includes making the ONNX export (in a child process).
        if workers == 1:
            serving_warm_up_in_background()
        else:
            # Each server process warms its own model; the parent serves nothing and needs none.
            os.environ[SERVER_PROCESS_ENV] = "1"
        worker = None
        if settings.SLOWAVE_EMBEDDED_WORKER and not options["no_worker"]:
            worker = start_embedded_worker(verbose=verbose)
        state = worker_state(started=worker is not None, no_worker_flag=options["no_worker"])
        self.stdout.write(start_block(host=host, port=port, workers=workers, worker=state))
        self.stdout.flush()
        if host not in ("127.0.0.1", "localhost", "::1") and not settings.SLOWAVE_API_TOKENS:
            self.stderr.write("warning: listening beyond loopback without SLOWAVE_API_TOKENS")
        # uvicorn re-raises SIGTERM after its graceful shutdown; as SystemExit it lets the
        # `finally` below stop the worker instead of orphaning it.
        signal.signal(signal.SIGTERM, _exit_on_signal)
        try:
            serve(
                "slowave_site.asgi:application",
                host=host,
                port=port,
                workers=workers,
                log_level="info" if verbose else "warning",
            )
        finally:
            if worker is not None:
                stop_worker(worker)  # reaches the worker's whole process group
