"""Which embedder wrote a store's vectors: its identity, the store's record, the check.

Lives here: an embedder's identity (name, precision, digest of its weights), reading the
store's record (`StoreEmbedder`, one row), writing it on a store's first encode, and the check
`memory.embeddings.encode` makes before every encode. Does not live here: which embedder
serves a process (memory.embeddings), doctor's report of it (services/doctor_embedder.py).

Why: int8 weights move a vector by up to a few hundredths of cosine, so an int8 query meets
fp32 vectors a little off, and a store holding both ranks unlike things side by side with
nothing to show for it. A process configured with another embedder than the store's record
refuses to encode (EmbedderMismatch, a structured error naming both and the way out); the
rows it would have written are never written. The record binds once the store holds vectors:
over a store without any (a warm-up's encode on a fresh store), the next embedder rewrites it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from memory.embedders.export_files import (
    FP32_FILE,
    INT8_FILE,
    export_directory,
    manifest_read,
)
from memory.embedders.onnx_runtime import INT8_NAME
from memory.errors import EmbedderMismatch
from memory.models import Episode, Memory, Procedure, StoreEmbedder

# The weights file whose digest names each precision's vectors (the manifest's own sha256s).
WEIGHTS_FILE = {"fp32": FP32_FILE, "int8": INT8_FILE}
SETTING_FOR = {"fp32": "onnx", "int8": "onnx-int8", "hash": "hash"}


class Named(Protocol):
    @property
    def name(self) -> str: ...


@dataclass(frozen=True)
class Identity:
    name: str
    precision: str  # fp32 | int8 | hash
    digest: str  # sha256 of the weights file, "" when unknown (torch, hash)

    def describe(self) -> str:
        digest = f", weights {self.digest[:12]}" if self.digest else ""
        return f"{self.name} ({self.precision}{digest})"


def precision_of(name: str) -> str:
    if name == INT8_NAME:
        return "int8"
    return "hash" if name.startswith("hash-") else "fp32"


def identity_of(embedder: Named) -> Identity:
    """The identity of an embedder, read from its name and the export's manifest (no model is
    loaded, no file hashed)."""
    precision = precision_of(embedder.name)
    return Identity(embedder.name, precision, _digest(precision))


def _digest(precision: str) -> str:
    weights = WEIGHTS_FILE.get(precision)
    if weights is None:
        return ""
    manifest = manifest_read(export_directory(settings.SLOWAVE_MODEL_DIR)) or {}
    return str(manifest.get("files", {}).get(weights, {}).get("sha256", ""))


def record_read() -> StoreEmbedder | None:
    return StoreEmbedder.objects.filter(pk=1).first()


def store_holds_vectors() -> bool:
    return any(
        model.objects.filter(embedding__isnull=False).exists()
        for model in (Memory, Episode, Procedure)
    )


# Stores (by database name) whose record this process has seen match its embedder's name.
_checked: set[tuple[str, str]] = set()
_checked_lock = threading.Lock()


def checks_forget() -> None:
    """Read every store's record again at the next encode (a test's store is rolled back)."""
    with _checked_lock:
        _checked.clear()


def record_check(embedder: Named, *, now: datetime | None = None) -> None:
    """Refuse (EmbedderMismatch) when the store's vectors are another embedder's; record this
    embedder on a store that has no record yet, or a record but no vectors."""
    key = (str(connection.settings_dict.get("NAME")), embedder.name)
    if key in _checked:
        return
    mine = identity_of(embedder)
    if mine.precision == "hash":
        # The hashing embedder serves tests of pure mechanics and the load bench, never a
        # person's store: it neither records itself nor is refused.
        return
    try:
        with transaction.atomic():
            record = _record_or_mine(mine, now or timezone.now())
            if record.name != mine.name:
                if store_holds_vectors():
                    raise EmbedderMismatch(mismatch_message(record, mine))
                _record_write(record, mine, now or timezone.now())
    except DatabaseError:
        if StoreEmbedder._meta.db_table in connection.introspection.table_names():
            raise
        # Not migrated yet (mcp_serve's warm-up runs beside its migrations): no vector is
        # stored without the tables, and the next encode checks again.
        return
    with _checked_lock:
        _checked.add(key)


def _record_or_mine(mine: Identity, now: datetime) -> StoreEmbedder:
    record, _ = StoreEmbedder.objects.get_or_create(
        pk=1,
        defaults={
            "name": mine.name,
            "precision": mine.precision,
            "digest": mine.digest,
            "recorded_at": now,
            "recorded_by": "first_encode",
        },
    )
    return record


def _record_write(record: StoreEmbedder, mine: Identity, now: datetime) -> None:
    record.name, record.precision, record.digest = mine.name, mine.precision, mine.digest
    record.recorded_at, record.recorded_by = now, "first_encode"
    record.save()


def record_conflict(embedder: Named) -> str | None:
    """Read-only: why `embedder` may not encode for this store (None when it may); for the
    commands that check before they serve (`slowave up`) and doctor."""
    record = record_read()
    if record is None or record.name == embedder.name or not store_holds_vectors():
        return None
    return mismatch_message(record, identity_of(embedder))


def mismatch_message(record: StoreEmbedder, mine: Identity) -> str:
    wanted = SETTING_FOR.get(record.precision, "sentence-transformers")
    return (
        f"this store's vectors were written by {record.name} ({record.precision}); this "
        f"process embeds with {mine.describe()}, and one store never mixes two kinds of "
        f"vector. Set SLOWAVE_EMBEDDER={wanted} to use this store, or point SLOWAVE_DB_PATH "
        "at another store (`slowave export`, then `slowave import` into a new store, "
        "re-embeds every row with the new embedder)"
    )
