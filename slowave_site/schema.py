"""Bring a store's schema up to date before a CLI command uses it (a fresh SLOWAVE_HOME included).

`slowave up` and `mcp_serve` migrate when they start; the other commands that read or write the
store would otherwise meet "no such table" in a 60-line traceback. They migrate first, under the
same inter-process lock as `up` (memory/management/commands/migrate.py). A store that cannot be
migrated ends the command with one line naming the cause and `slowave migrate`, status 1.
"""

from __future__ import annotations

import sys

# Commands that do not touch the schema, or see to it themselves.
SELF_MIGRATING = frozenset(
    {"up", "mcp_serve", "migrate", "doctor", "restore", "backup", "setup", "embedder", "bench"}
)


def pending_migrations() -> int:
    from django.db import DEFAULT_DB_ALIAS, connections
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connections[DEFAULT_DB_ALIAS])
    return len(executor.migration_plan(executor.loader.graph.leaf_nodes()))


def migrate_or_exit(command: str, prog: str = "slowave") -> None:
    """Apply pending migrations before `command` runs; on failure one line and exit status 1."""
    if command in SELF_MIGRATING:
        return
    import django
    from django.core.management import call_command
    from django.db import DatabaseError

    from memory.services.holders import store_hold

    django.setup()
    try:
        if pending_migrations() == 0:
            return
        with store_hold(role="slowave migrate"):
            call_command("migrate", verbosity=0)
    except (DatabaseError, OSError) as exc:
        first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        print(
            f"{prog}: the database is not ready ({first_line}): run `{prog} migrate`",
            file=sys.stderr,
        )
        raise SystemExit(1) from None
