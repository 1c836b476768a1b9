"""Passage vectors: the sentences of a longer memory are embedded and searched on their own."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from django.utils import timezone

from consolidation.services.backfill import embeddings_backfill
from memory import embeddings, passages
from memory.models import Memory, VectorRow
from memory.retrieval.candidates import pool_for
from memory.retrieval.engine import rank
from memory.vectors import get_index
from memory.vectors.numpy_index import NumpyIndex
from tests.memory.test_retrieval_signals import SCOPE, _facts

NOTES = (
    "Deploy notes: the staging cluster was upgraded to Kubernetes 1.30 on Monday. "
    "Grafana dashboards were moved to the new folder. "
    "The on-call rotation now starts on Wednesdays. "
    "Backups of the billing database run nightly at 02:00 UTC."
)
# Shares no term with NOTES: only the meaning of its last sentence can find it.
QUESTION = "When are invoice records copied each night?"


def test_it_splits_sentences_keeping_the_leading_label_on_each():
    assert passages.split(NOTES) == [
        "Deploy notes: the staging cluster was upgraded to Kubernetes 1.30 on Monday.",
        "Deploy notes: Grafana dashboards were moved to the new folder.",
        "Deploy notes: The on-call rotation now starts on Wednesdays.",
        "Deploy notes: Backups of the billing database run nightly at 02:00 UTC.",
    ]


def test_short_sentences_join_a_neighbour_and_a_bracketed_note_stands_alone():
    text = "Ana: Thanks! I finally finished the pottery class last week [image: a blue clay bowl]"
    assert passages.split(text) == [
        "Ana: Thanks! I finally finished the pottery class last week",
        "Ana: [image: a blue clay bowl]",
    ]


def test_one_sentence_has_no_passages_and_a_long_text_is_capped():
    assert passages.split("The API gateway is written in Go.") == []
    assert passages.split("Thanks! See you soon.") == []
    many = " ".join(f"Step {n} of the runbook restarts service number {n}." for n in range(40))
    parts = passages.split(many)
    assert len(parts) == passages.MAX_PASSAGES
    assert parts[-1].endswith("restarts service number 39.")


def test_keys_name_their_memory():
    assert passages.owner(passages.key(1234, passages.MAX_PASSAGES - 1)) == 1234
    assert passages.key(1234, 0) != passages.key(1233, passages.KEY_SPAN - 1)


def _ranked(cue: str) -> list[int]:
    return [
        it.obj.pk for it in rank(scope=SCOPE, cue=cue, kind="recall", now=timezone.now()).memories
    ]


def _drop_passages(pk: int) -> None:
    """The state of a memory stored before passages existed."""
    Memory.objects.filter(pk=pk).update(passages=None)
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM vec_passage WHERE rowid >= %s AND rowid < %s",
            [passages.key(pk, 0), passages.key(pk + 1, 0)],
        )


@pytest.mark.django_db
def test_a_question_about_one_sentence_finds_the_memory_only_through_its_passage():
    (notes, noise) = _facts(NOTES, "The API gateway is written in Go.")
    # The call embeds the leading passages; the backfill pass the fourth (memory.passages).
    assert passages.from_blob(Memory.objects.get(pk=notes).passages).shape == (3, 384)
    assert _ranked(QUESTION) == []
    assert embeddings_backfill(now=timezone.now())["passages"] == 1
    stored = passages.from_blob(Memory.objects.get(pk=notes).passages)
    assert stored is not None and stored.shape == (4, 384)
    assert Memory.objects.get(pk=noise).passages == b""
    assert _ranked(QUESTION) == [notes]

    _drop_passages(notes)  # whole-text vector only: below the relevance floor
    assert _ranked(QUESTION) == []

    assert embeddings_backfill(now=timezone.now())["passages"] == 1
    assert _ranked(QUESTION) == [notes]


@pytest.mark.django_db
def test_the_numpy_backend_seeds_passages_from_the_memory_rows():
    (notes,) = _facts(NOTES)
    embeddings_backfill(now=timezone.now())
    VectorRow.objects.filter(kind="passage").delete()  # a store written by sqlite-vec
    cue = passages.encode([QUESTION])[0].vector
    hits = NumpyIndex().knn("passage", cue, 1, [SCOPE])
    assert [passages.owner(key) for key, _ in hits] == [notes]
    whole = NumpyIndex().knn("memory", cue, 1, [SCOPE])
    assert hits[0][1] > whole[0][1] + 0.1
    vector = embeddings.from_blob(Memory.objects.get(pk=notes).embedding)
    parts = passages.from_blob(Memory.objects.get(pk=notes).passages)
    assert np.isclose(hits[0][1], max(float(cue @ vector), float((parts @ cue).max())), atol=1e-5)


@pytest.mark.django_db
def test_the_dense_pool_ranks_a_memory_by_its_nearest_passage():
    notes, records = _facts(NOTES, "Customer records are stored for seven years.")
    embeddings_backfill(now=timezone.now())
    cue = passages.encode([QUESTION])[0].vector
    assert [key for key, _ in get_index().knn("memory", cue, 1, [SCOPE])] == [records]
    pool = pool_for("memory", QUESTION, cue, [SCOPE], limit=1)
    assert pool.dense == {notes: 1, records: 2}  # the passage hit ranks first; the union stays
