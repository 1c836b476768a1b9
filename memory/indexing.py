"""The one way rows enter and leave the search indexes (spec §4): lexical, vectors, passages.

Memories, episodes, procedures and prototypes are indexed here and nowhere else. Every writer
(remember, episode formation, the procedure a commit stores, consolidation, an import, the
embeddings backfill) calls these services inside its own transaction, so what each kind is
searched by (its text, its key, a memory's passages) is written down once. Encoding stays with
the caller: a remember call embeds its leading passages itself and the backfill pass the rest
(memory.passages), and a caller without a vector (the model unavailable) indexes the text alone.

`vector_seed_rows` hands a vector backend that keeps its own copy (numpy) the vectors the rows
already hold, as plain data (memory.apps installs it), so no backend reads these models.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

import numpy as np
from django.db.models import QuerySet

from memory import lexical, passages
from memory.embeddings import known_vector
from memory.models import Episode, Memory, Procedure, Prototype
from memory.passages import NONE, Embedded
from memory.vectors import get_index

Indexed = Memory | Episode | Procedure


def indexed_text(row: Indexed) -> str:
    """The text a row is searched and embedded by: a procedure's goal and summary."""
    if isinstance(row, Procedure):
        return f"{row.goal}\n{row.summary}"
    return row.content


def index_key(row: Indexed) -> int:
    """The row's key in its lexical and vector indexes (a procedure's id is a string, so it
    has a stable integer of its own: memory.ids.procedure_index_key)."""
    return row.index_key if isinstance(row, Procedure) else row.pk


def index_kind(row: Indexed | Prototype) -> str:
    if isinstance(row, Memory):
        return "memory"
    if isinstance(row, Episode):
        return "episode"
    return "procedure" if isinstance(row, Procedure) else "prototype"


def index_memory(*, memory: Memory, embedded: Embedded | None) -> None:
    """The memory's lexical row, and its whole-text and passage vectors when it is embedded."""
    index_lexical(row=memory)
    if embedded is not None:
        index_embedded(row=memory, embedded=embedded)


def index_memories(*, rows: list[tuple[Memory, Embedded | None]]) -> None:
    """index_memory for each, a statement or three per index for the whole batch."""
    lexical.index_many("memory", [(m.pk, m.scope, m.content) for m, _ in rows])
    embedded = [(m, e) for m, e in rows if e is not None]
    _upsert_all("memory", [(m.pk, m.scope, e.vector) for m, e in embedded])
    _upsert_all(
        "passage",
        [
            (passages.key(m.pk, ordinal), m.scope, vector)
            for m, e in embedded
            for ordinal, vector in enumerate(e.passages)
        ],
    )


def index_episode(*, episode: Episode, vector: np.ndarray | None) -> None:
    index_episodes(rows=[(episode, vector)])


def index_episodes(*, rows: list[tuple[Episode, np.ndarray | None]]) -> None:
    lexical.index_many("episode", [(e.pk, e.scope, e.content) for e, _ in rows])
    _upsert_all("episode", [(e.pk, e.scope, v) for e, v in rows if v is not None])


def index_procedure(*, procedure: Procedure, vector: np.ndarray | None) -> None:
    index_lexical(row=procedure)
    if vector is not None:
        index_embedded(row=procedure, embedded=Embedded(vector, NONE))


def index_prototype(*, prototype: Prototype) -> None:
    """A prototype is searched by its centroid only (consolidation's nearest-cluster match)."""
    get_index().upsert("prototype", prototype.pk, prototype.scope, known_vector(prototype.centroid))


def index_lexical(*, row: Indexed) -> None:
    """The row's lexical row alone: its vectors follow once it is embedded (index_embedded)."""
    lexical.index(index_kind(row), index_key(row), row.scope, indexed_text(row))


def index_embedded(*, row: Indexed, embedded: Embedded) -> None:
    """The vectors of a row whose lexical row is written: its whole text, and a memory's
    passages (the other kinds have none)."""
    get_index().upsert(index_kind(row), index_key(row), row.scope, embedded.vector)
    if isinstance(row, Memory):
        index_passages(memory_pk=row.pk, scope=row.scope, vectors=embedded.passages)


def index_passages(*, memory_pk: int, scope: str, vectors: np.ndarray, first: int = 0) -> None:
    """Upsert a memory's passage vectors, the first at ordinal `first` (the backfill pass
    appends to those a remember call embedded)."""
    _upsert_all(
        "passage",
        [
            (passages.key(memory_pk, ordinal), scope, vector)
            for ordinal, vector in enumerate(vectors, start=first)
        ],
    )


def _upsert_all(kind: str, rows: list[tuple[int, str, np.ndarray]]) -> None:
    """Each row's vector, in order; in one round trip where the backend takes a batch
    (`upsert_many`, which sqlite-vec has), else one upsert at a time."""
    index = get_index()
    many = getattr(index, "upsert_many", None)
    if many is not None:
        many(kind, rows)
        return
    for row_id, scope, vector in rows:
        index.upsert(kind, row_id, scope, vector)


def unindex(*, row: Indexed | Prototype) -> None:
    """Take a row out of every index it is in; what it is not in is left alone."""
    index = get_index()
    kind = index_kind(row)
    if isinstance(row, Prototype):
        index.delete(kind, row.pk)
        return
    key = index_key(row)
    lexical.remove(kind, key)
    index.delete(kind, key)
    if isinstance(row, Memory):
        # Every ordinal a memory can have, not the count its row holds: the instance in hand
        # may predate the backfill pass that appended the rest.
        for ordinal in range(passages.MAX_PASSAGES):
            index.delete("passage", passages.key(row.pk, ordinal))


SeedRow = tuple[int, str, bytes]  # (key, scope, float32 vector bytes)


def vector_seed_rows(kind: str) -> Iterator[SeedRow] | None:
    """Every vector the rows of a vector kind hold, or None when none holds one. The rows
    are read as they are consumed (the numpy backend does so under its write lock)."""
    source = _seed_source(kind)
    if not source.exists():
        return None
    return _seed_rows(kind, source)


def _seed_source(kind: str) -> QuerySet:
    if kind == "prototype":
        return Prototype.objects.values_list("pk", "scope", "centroid")
    if kind == "procedure":
        return Procedure.objects.exclude(embedding=None).values_list(
            "index_key", "scope", "embedding"
        )
    if kind == "passage":
        return (
            Memory.objects.exclude(passages=None)
            .exclude(passages=b"")
            .values_list("pk", "scope", "passages")
        )
    model = Memory if kind == "memory" else Episode
    return model.objects.exclude(embedding=None).values_list("pk", "scope", "embedding")


def _seed_rows(kind: str, source: QuerySet) -> Iterator[SeedRow]:
    """A memory's passages are one blob of several vectors, each its own row."""
    for key, scope, blob in source.iterator():
        if kind != "passage":
            yield key, scope, bytes(blob)
            continue
        # The passage source excludes empty blobs, so each decodes to a matrix.
        for ordinal, vector in enumerate(cast(np.ndarray, passages.from_blob(blob))):
            yield passages.key(key, ordinal), scope, vector.tobytes()
