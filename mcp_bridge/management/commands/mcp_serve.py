"""`manage.py mcp_serve [--no-worker]`: the stdio MCP server (spec §6.1).

stdout carries protocol frames only: migrate output and logs go to stderr, nothing prints.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sys
from argparse import ArgumentParser
from typing import Any

import anyio
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor


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
        # Imported here: the SDK import is a large share of the startup budget, and
        # `manage.py help` should not pay it.
        from mcp_bridge.server import serve_stdio

        serve = functools.partial(
            serve_stdio, prepare=migrate_if_needed, background_worker=not options["no_worker"]
        )
        with contextlib.suppress(KeyboardInterrupt):
            anyio.run(serve)
        # Interpreter teardown with torch loaded takes ~1.5 s, and stdio clients send SIGTERM
        # 2 s after closing stdin. Every write is committed by now and the database thread
        # has closed its connection, so skip the teardown.
        logging.shutdown()
        sys.stderr.flush()
        os._exit(0)


def migrate_if_needed() -> None:
    """Apply unapplied migrations to the existing database; never recreate it.

    Runs while the server is already answering, so stdout is the protocol stream: every
    byte of migrate output must go to stderr.
    """
    connection = connections[DEFAULT_DB_ALIAS]
    try:
        executor = MigrationExecutor(connection)
        if executor.migration_plan(executor.loader.graph.leaf_nodes()):
            with contextlib.redirect_stdout(sys.stderr):
                call_command(
                    "migrate", interactive=False, verbosity=1, stdout=sys.stderr, stderr=sys.stderr
                )
    finally:
        connection.close()
