"""`manage.py mcp_serve [--no-worker]`: the stdio MCP server (spec §6.1).

stdout carries protocol frames only: migrate output and logs go to stderr, nothing prints.
stderr is the agent's log: one start line once the database is ready, then warnings, errors
and at most one routine line a minute (mcp_bridge.log_limit).
"""

from __future__ import annotations

import contextlib
import functools
import io
import logging
import os
import sys
import traceback
from argparse import ArgumentParser
from typing import Any

import anyio
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor

from mcp_bridge.log_limit import say
from memory.selectors.stats import database_label
from memory.services.holders import store_hold
from memory.services.storage import storage_check_writable


class Command(BaseCommand):
    help = "Serve the Slowave MCP tools over stdio; stdout carries protocol frames only."
    # System checks cost startup time that the 3-second handshake budget cannot spare;
    # `slowave doctor` runs them instead.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--no-worker",
            action="store_true",
            help="Do not run the in-process idle-session reaper (rely on a Celery beat instead).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        # First, before the SDK's import (about a second holding the GIL): loading the model
        # and reading the vector copy spend most of their time in C without the GIL, so they
        # are done by the time the first tool call arrives instead of after it.
        from memory.services.warming import serving_warm_up_in_background

        serving_warm_up_in_background()
        # Imported here: the SDK import is a large share of the startup budget, and
        # `manage.py help` should not pay it; nor its client half here (mcp_bridge.sdk_packages).
        from mcp_bridge.sdk_packages import register_bare_packages

        register_bare_packages()
        from mcp_bridge import collector
        from mcp_bridge.log_limit import limit_routine_lines
        from mcp_bridge.server import ServerCannotStart, serve_stdio

        collector.resume()  # paused by manage.py (or slowave) before Django, if it ran
        limit_routine_lines()
        serve = functools.partial(
            serve_stdio, prepare=migrate_if_needed, background_worker=not options["no_worker"]
        )
        status = 0
        try:
            # Registered while serving, so `slowave restore` refuses to replace the store under it.
            with store_hold(role="mcp_serve"), contextlib.suppress(KeyboardInterrupt):
                anyio.run(serve)
        except Exception as exc:
            # Exit either way: a server that cannot serve must not sit on an open stdin.
            status = 1
            cause = _find(exc, ServerCannotStart)
            if cause is None:
                logging.getLogger(__name__).error("mcp_serve stopped: %s", exc, exc_info=exc)
            else:
                _report_cannot_start(
                    cause, exc, verbose=options["traceback"] or options["verbosity"] > 1
                )
        # Interpreter teardown with torch loaded takes ~1.5 s, and stdio clients send SIGTERM
        # 2 s after closing stdin. Every write is committed by now and the database thread
        # has closed its connection, so skip the teardown.
        logging.shutdown()
        sys.stderr.flush()
        os._exit(status)


def _report_cannot_start(cause: BaseException, exc: BaseException, *, verbose: bool) -> None:
    """One line for the agent's log; the traceback too only when asked for (--traceback, -v 2)."""
    if verbose:
        traceback.print_exception(exc, file=sys.stderr)
    reason = " ".join(str(cause).split())
    sys.stderr.write(
        f"mcp_serve: cannot start: {reason}; check SLOWAVE_DB_PATH (or DATABASE_URL), "
        "or run `slowave doctor`\n"
    )


def _find(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    """`exc` itself if it is a `kind`, else the first `kind` in its exception groups."""
    if isinstance(exc, kind):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _find(inner, kind)
            if found is not None:
                return found
    return None


def migrate_if_needed() -> None:
    """Apply unapplied migrations to the existing database (never recreate it), then say the
    server's one start line: the database, and how many migrations this process applied.

    Runs while the server is already answering, so stdout is the protocol stream: no byte
    of migrate output may reach it. Its lines are counted, not shown (the agent's log).
    """
    connection = connections[DEFAULT_DB_ALIAS]
    applied = 0
    try:
        executor = MigrationExecutor(connection)
        if executor.migration_plan(executor.loader.graph.leaf_nodes()):
            report = io.StringIO()
            with contextlib.redirect_stdout(sys.stderr):
                call_command(
                    "migrate", interactive=False, verbosity=1, stdout=report, stderr=sys.stderr
                )
            # Another server starting at the same moment may have applied them first.
            applied = sum(
                line.lstrip().startswith("Applying ") for line in report.getvalue().splitlines()
            )
        # A server that cannot write its store must not report ready (it would fail every write).
        storage_check_writable()
    finally:
        connection.close()
    migrations = f"; applied {applied} migrations" if applied else ""
    say(f"Slowave MCP on stdio, database {database_label()}{migrations}")
