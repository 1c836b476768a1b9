"""Kept benchmark stores (``--store DIR``): ingest once, ask many times.

``DIR/store.sqlite3`` is the database an ingest left; ``DIR/manifest.json`` says what went in
(bench, the data file's sha256, ingest options, embedder, which samples or questions) and maps
every memory id to the turns behind it. A later run whose manifest matches skips the ingest. The
kept file itself is never asked: asking writes sessions, retrievals and exposures, so each run
asks a scratch copy and every rerun starts from exactly the state the ingest left.

Without ``--store`` the ingest goes to a temporary database, as it always did. The default
connection is pointed at the bench database for the duration and restored afterwards.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

STORE_DB = "store.sqlite3"
MANIFEST = "manifest.json"
MANIFEST_FORMAT = 1
# item (sample or question id) -> memory id -> the turn ids behind it
Kept = dict[str, dict[str, list[str]]]
Ingest = Callable[[Sequence[str]], Kept]


class StoreMismatch(ValueError):
    """The kept store was built from other data or options than this run asks for."""


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class IngestSpec:
    """What a run needs ingested; a kept store serves it if everything but ``items`` is equal
    and the store holds at least these items."""

    bench: str
    data_path: str
    data_sha256: str
    items: tuple[str, ...]
    options: dict[str, Any] = field(default_factory=dict)  # roles, consolidation, embedder...


def _differences(manifest: Mapping[str, Any], spec: IngestSpec) -> list[str]:
    found: list[str] = []
    if manifest.get("bench") != spec.bench:
        found.append(f"bench {manifest.get('bench')!r}, not {spec.bench!r}")
    if manifest.get("data_sha256") != spec.data_sha256:
        found.append(f"another data file ({manifest.get('data_path')}, sha256 differs)")
    kept = manifest.get("options", {})
    for name in sorted(set(kept) | set(spec.options)):
        if kept.get(name) != spec.options.get(name):
            found.append(f"{name}={kept.get(name)!r}, not {spec.options.get(name)!r}")
    missing = [i for i in spec.items if i not in manifest.get("mapping", {})]
    if missing:
        found.append(
            f"it lacks {len(missing)} of the {len(spec.items)} items asked for "
            f"(first: {missing[0]})"
        )
    return found


def check(manifest: Mapping[str, Any], spec: IngestSpec, directory: Path) -> None:
    """Raise StoreMismatch naming every difference between the kept store and this run."""
    found = _differences(manifest, spec)
    if found:
        raise StoreMismatch(
            f"the store in {directory} does not match this run: {'; '.join(found)}. "
            "Pass --rebuild to ingest it again, or give another --store."
        )


def read_manifest(directory: Path) -> dict[str, Any] | None:
    path = directory / MANIFEST
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise StoreMismatch(f"{path} is unreadable ({exc}); pass --rebuild") from exc
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        raise StoreMismatch(f"{path} is not a bench store manifest; pass --rebuild")
    return data


def write_manifest(directory: Path, spec: IngestSpec, kept: Kept) -> Path:
    from slowave_site.bench.report import write_json

    return write_json(
        directory / MANIFEST,
        {
            "format": MANIFEST_FORMAT,
            "bench": spec.bench,
            "data_path": spec.data_path,
            "data_sha256": spec.data_sha256,
            "options": spec.options,
            "items": list(spec.items),
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "mapping": kept,
        },
    )


def _clear(directory: Path) -> None:
    from slowave_site.db.base import forget_file

    forget_file(str(directory / STORE_DB))
    for name in (MANIFEST, STORE_DB, f"{STORE_DB}-wal", f"{STORE_DB}-shm"):
        (directory / name).unlink(missing_ok=True)


@contextmanager
def database(path: Path) -> Iterator[Path]:
    """The default connection on the SQLite file ``path`` (migrated), restored afterwards."""
    from django.core.management import call_command
    from django.db import connections

    connection = connections["default"]
    original = connection.settings_dict["NAME"]
    connection.close()
    connection.settings_dict["NAME"] = str(path)
    try:
        call_command("migrate", verbosity=0)
        yield path
    finally:
        connection.close()  # the last connection closing checkpoints the WAL into the file
        connection.settings_dict["NAME"] = original


def copy_database(source: Path, target: Path) -> None:
    """A consistent copy through SQLite's backup API (WAL included, whatever its state)."""
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()


def _ingest_kept(
    directory: Path, spec: IngestSpec, ingest: Ingest, rebuild: bool, log: Callable[[str], None]
) -> Kept:
    directory.mkdir(parents=True, exist_ok=True)
    manifest = None if rebuild else read_manifest(directory)
    if manifest is not None:
        check(manifest, spec, directory)
        log(f"store {directory}: ingest skipped (manifest matches, {len(spec.items)} items)")
        return {item: manifest["mapping"][item] for item in spec.items}
    if (directory / STORE_DB).exists() and not rebuild:
        raise StoreMismatch(
            f"{directory} holds a {STORE_DB} but no manifest (an interrupted ingest?). "
            "Pass --rebuild to ingest it again, or give another --store."
        )
    _clear(directory)
    log(f"store {directory}: ingesting {len(spec.items)} items")
    with database(directory / STORE_DB):
        kept = ingest(spec.items)
    # Written last: a manifest exists only beside a complete ingest.
    write_manifest(directory, spec, kept)
    return kept


@contextmanager
def scratch_database() -> Iterator[Path]:
    """The default connection on a temporary, migrated SQLite file, removed afterwards."""
    scratch = Path(tempfile.mkdtemp(prefix="slowave-bench-"))
    try:
        with database(scratch / "bench.sqlite3") as path:
            yield path
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@contextmanager
def ingested(
    spec: IngestSpec,
    ingest: Ingest,
    *,
    store: str | Path | None = None,
    rebuild: bool = False,
    log: Callable[[str], None] | None = None,
) -> Iterator[Kept]:
    """The default connection on a database holding ``spec``'s ingest, and its mapping.

    ``ingest(items)`` runs against the database it is given and returns item -> memory id ->
    turn ids. With ``store`` it runs only when the kept manifest does not match (or
    ``rebuild``), and the questions are then asked on a scratch copy of the kept file.
    """
    if store is None:
        with scratch_database():
            yield ingest(spec.items)
        return
    kept = _ingest_kept(Path(store), spec, ingest, rebuild, log or (lambda message: None))
    scratch = Path(tempfile.mkdtemp(prefix="slowave-bench-"))
    try:
        copy_database(Path(store) / STORE_DB, scratch / "bench.sqlite3")
        with database(scratch / "bench.sqlite3"):
            yield kept
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
