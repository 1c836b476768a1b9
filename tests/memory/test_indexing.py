"""The indexing service: every kind enters its lexical, vector and passage indexes through
memory.indexing, a second indexing changes nothing, and unindex leaves no row behind.

Pure mechanics on the real database with both vector backends: the vectors are fixed random
directions, so no model is loaded.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from django.db import connection
from django.utils import timezone

from memory import indexing, lexical, passages, vectors
from memory.embeddings import to_blob
from memory.ids import procedure_id, procedure_index_key
from memory.models import Episode, Event, Memory, Procedure, Prototype, Session, VectorRow
from memory.passages import Embedded

pytestmark = pytest.mark.django_db
SCOPE = "project:indexing"
NOTES = (
    "Deploy notes: the staging cluster runs Kubernetes. "
    "Grafana dashboards moved to the new folder. "
    "Backups of the billing database run nightly."
)


@pytest.fixture(params=["sqlite-vec", "numpy"], autouse=True)
def backend(request, settings, monkeypatch) -> str:
    """The configured backend, chosen afresh (get_index keeps one per process)."""
    settings.SLOWAVE_VECTOR_BACKEND = request.param
    monkeypatch.setattr(vectors, "_index", None)
    assert vectors.get_index().name == request.param
    return request.param


def _unit(n: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(n, 384)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _session(name: str = "ses_indexing") -> Session:
    now = timezone.now()
    return Session.objects.create(
        id=name,
        scope=SCOPE,
        scope_kind="project",
        task="t",
        initial_goal="g",
        started_at=now,
        last_activity_at=now,
    )


def _memory(content: str = NOTES) -> Memory:
    return Memory.objects.create(
        type="fact",
        content=content,
        normalized_hash="x",
        scope=SCOPE,
        scope_kind="project",
        created_at=timezone.now(),
    )


def _episode() -> Episode:
    session = _session()
    event = Event.objects.create(
        session=session, seq=1, kind=Event.Kind.USER_MESSAGE, recorded_at=timezone.now()
    )
    return Episode.objects.create(
        session=session,
        scope=SCOPE,
        content="User: the invoices moved to the archive bucket",
        first_event=event,
        recorded_at=timezone.now(),
    )


def _procedure() -> Procedure:
    session = _session("ses_indexing_proc")
    return Procedure.objects.create(
        id=procedure_id(session.id),
        index_key=procedure_index_key(session.id),
        session=session,
        scope=SCOPE,
        goal="Rotate the billing keys",
        summary="Revoke, reissue, redeploy",
        outcome="success",
        created_at=timezone.now(),
    )


def _lexical_rows(kind: str, key: int) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM fts_{kind} WHERE rowid = %s", [key])
        return int(cursor.fetchone()[0])


def _vector_rows(kind: str, key: int) -> int:
    """The rows the backend holds for a key (numpy: its log rows that carry a vector)."""
    if vectors.get_index().name == "numpy":
        return VectorRow.objects.filter(kind=kind, row_id=key).exclude(embedding=None).count()
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM vec_{kind} WHERE rowid = %s", [key])
        return int(cursor.fetchone()[0])


def _found(kind: str, vector: np.ndarray) -> list[int]:
    return [key for key, _ in vectors.get_index().knn(kind, vector, 50, [SCOPE])]


def _passage_keys(memory: Memory) -> list[int]:
    return [passages.key(memory.pk, ordinal) for ordinal in range(passages.MAX_PASSAGES)]


def test_it_indexes_a_memory_with_its_passages_and_unindex_leaves_no_row():
    memory, (whole, *parts) = _memory(), _unit(4, seed=1)
    indexing.index_memory(memory=memory, embedded=Embedded(whole, np.stack(parts)))
    assert [key for key, _ in lexical.search("memory", "grafana", [SCOPE], 5)] == [memory.pk]
    assert _found("memory", whole) == [memory.pk]
    assert _found("passage", parts[1])[0] == passages.key(memory.pk, 1)
    assert sorted(_found("passage", parts[0])) == [passages.key(memory.pk, i) for i in range(3)]

    indexing.unindex(row=memory)
    assert lexical.search("memory", "grafana", [SCOPE], 5) == []
    assert _lexical_rows("memory", memory.pk) == 0
    assert _vector_rows("memory", memory.pk) == 0
    assert sum(_vector_rows("passage", key) for key in _passage_keys(memory)) == 0
    assert _found("memory", whole) == [] and _found("passage", parts[0]) == []


def test_indexing_a_memory_again_changes_nothing():
    memory, (whole, *parts) = _memory(), _unit(3, seed=2)
    embedded = Embedded(whole, np.stack(parts))
    for _ in range(2):
        indexing.index_memory(memory=memory, embedded=embedded)
        assert _lexical_rows("memory", memory.pk) == 1
        assert _vector_rows("memory", memory.pk) == 1
        assert [_vector_rows("passage", passages.key(memory.pk, i)) for i in range(3)] == [1, 1, 0]
        assert _found("memory", whole) == [memory.pk]


def test_a_memory_without_a_vector_is_indexed_for_words_only_until_it_is_embedded():
    memory, (whole,) = _memory("The API gateway is written in Go"), _unit(1, seed=3)
    indexing.index_memory(memory=memory, embedded=None)
    assert _lexical_rows("memory", memory.pk) == 1
    assert _vector_rows("memory", memory.pk) == 0
    indexing.index_embedded(row=memory, embedded=Embedded(whole, passages.NONE))
    assert _found("memory", whole) == [memory.pk]
    assert _lexical_rows("memory", memory.pk) == 1


def test_later_passages_are_appended_after_the_ones_a_remember_call_embedded():
    memory, unit = _memory(), _unit(5, seed=4)
    indexing.index_memory(memory=memory, embedded=Embedded(unit[0], unit[1:3]))
    indexing.index_passages(memory_pk=memory.pk, scope=SCOPE, vectors=unit[3:], first=2)
    assert [_found("passage", vector)[0] for vector in unit[1:]] == [
        passages.key(memory.pk, ordinal) for ordinal in range(4)
    ]


@pytest.mark.parametrize("make", [_episode, _procedure], ids=["episode", "procedure"])
def test_an_episode_and_a_procedure_are_indexed_and_unindexed(make):
    row, (vector,) = make(), _unit(1, seed=5)
    kind, key = indexing.index_kind(row), indexing.index_key(row)
    word = "invoices" if kind == "episode" else "billing"
    if kind == "episode":
        indexing.index_episode(episode=row, vector=vector)
    else:
        indexing.index_procedure(procedure=row, vector=vector)
    assert [hit for hit, _ in lexical.search(kind, word, [SCOPE], 5)] == [key]
    assert _found(kind, vector) == [key]

    indexing.unindex(row=row)
    assert _lexical_rows(kind, key) == 0 and _vector_rows(kind, key) == 0
    assert lexical.search(kind, word, [SCOPE], 5) == [] and _found(kind, vector) == []


def test_a_procedure_is_searched_by_its_goal_and_summary():
    procedure = _procedure()
    assert indexing.indexed_text(procedure) == "Rotate the billing keys\nRevoke, reissue, redeploy"
    indexing.index_procedure(procedure=procedure, vector=None)
    hits = lexical.search("procedure", "reissue", [SCOPE], 5)
    assert [key for key, _ in hits] == [procedure.index_key]
    assert _vector_rows("procedure", procedure.index_key) == 0


def test_a_prototype_is_indexed_by_its_centroid_and_unindexed():
    (centroid,) = _unit(1, seed=6)
    now = timezone.now()
    prototype = Prototype.objects.create(
        scope=SCOPE,
        centroid=to_blob(centroid),
        vector_sum=to_blob(centroid),
        created_at=now,
        updated_at=now,
    )
    for _ in range(2):
        indexing.index_prototype(prototype=prototype)
        assert _vector_rows("prototype", prototype.pk) == 1
    assert _found("prototype", centroid) == [prototype.pk]
    indexing.unindex(row=prototype)
    assert _vector_rows("prototype", prototype.pk) == 0
    assert _found("prototype", centroid) == []


def test_the_seed_rows_are_the_vectors_the_rows_hold(backend):
    if backend != "sqlite-vec":
        pytest.skip("the seed is read by the numpy backend; one run covers it")
    assert indexing.vector_seed_rows("passage") is None
    memory, unit = _memory(), _unit(3, seed=7)
    Memory.objects.filter(pk=memory.pk).update(
        embedding=to_blob(unit[0]), passages=passages.to_blob(unit[1:])
    )
    (row,) = list(indexing.vector_seed_rows("memory") or [])
    assert row == (memory.pk, SCOPE, unit[0].tobytes())
    seeded = list(indexing.vector_seed_rows("passage") or [])
    assert seeded == [(passages.key(memory.pk, i), SCOPE, unit[1 + i].tobytes()) for i in range(2)]


def test_no_vector_backend_reads_the_rows_it_indexes():
    """The backends take keys, scopes and vectors: none imports passages or the indexed models
    (the numpy backend's own store, VectorRow and VectorStamp, is its to read)."""
    own = {"VectorRow", "VectorStamp"}
    for path in sorted(Path(vectors.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = {alias.name for alias in node.names}
                assert node.module not in ("memory.passages", "memory.indexing"), path.name
                assert not (node.module == "memory" and names & {"passages", "indexing"})
                if node.module == "memory.models":
                    assert names <= own, (path.name, names - own)
            elif isinstance(node, ast.Import):
                assert not {a.name for a in node.names} & {"memory.passages", "memory.models"}
    passages_imports = {
        node.module
        for node in ast.walk(ast.parse(Path(passages.__file__).read_text()))
        if isinstance(node, ast.ImportFrom)
    }
    assert "memory.vectors" not in passages_imports  # passages are indexed by memory.indexing
