"""A remember call embeds a bounded number of passages; the backfill pass embeds the rest.

On the real model and database: the call's work does not grow with the length of a memory, the
memory is found at once, and the embeddings backfill pass completes its passages, once.
"""

from __future__ import annotations

import numpy as np
import pytest
from django.utils import timezone

from consolidation.services.backfill import embeddings_backfill
from consolidation.services.passes import BY_NAME, passes_run
from memory import descriptions, embeddings, passages
from memory.models import Memory
from memory.vectors import get_index
from tests.memory.test_retrieval_signals import SCOPE, _facts, _ranked

pytestmark = pytest.mark.django_db

TOPICS = (
    "the staging cluster runs Kubernetes 1.30",
    "Grafana dashboards live in the platform folder",
    "the on-call rotation starts on Wednesdays",
    "billing database backups run nightly at 02:00 UTC",
    "the search service is written in Rust",
    "release candidates are tagged every second Thursday",
    "the mobile app ships through the beta channel first",
    "invoices are archived for seven years",
    "the design review happens in the Atlas meeting room",
    "feature flags expire after ninety days",
)
LONG = " ".join(f"Note {n}: {topic}." for n, topic in enumerate(TOPICS, start=1))


def _passage_rows(pk: int) -> int:
    """The passage vectors the index holds for the memory."""
    vectors = embeddings.encode(["anything"])
    assert vectors is not None
    cue = vectors[0]
    hits = get_index().knn("passage", cue, passages.KEY_SPAN * 4, [SCOPE])
    return sum(1 for key, _ in hits if passages.owner(key) == pk)


def _stored(pk: int) -> np.ndarray:
    matrix = passages.from_blob(Memory.objects.get(pk=pk).passages)
    return np.zeros((0, embeddings.DIMENSIONS)) if matrix is None else matrix


def test_it_embeds_only_the_leading_passages_in_the_call_and_the_rest_in_the_backfill():
    assert len(passages.split(LONG)) == len(TOPICS) > passages.REMEMBER_PASSAGES
    (pk,) = _facts(LONG)
    memory = Memory.objects.get(pk=pk)
    assert memory.embedded_at is not None and memory.embedding
    assert not memory.passages_complete
    assert _stored(pk).shape == (passages.REMEMBER_PASSAGES, embeddings.DIMENSIONS)
    assert _passage_rows(pk) == passages.REMEMBER_PASSAGES

    assert embeddings_backfill(now=timezone.now())["passages"] == 1

    assert Memory.objects.get(pk=pk).passages_complete
    whole = passages.encode([LONG])[0].passages
    assert _stored(pk).shape == whole.shape == (len(TOPICS), embeddings.DIMENSIONS)
    assert np.allclose(_stored(pk), whole, atol=1e-5)  # same vectors, same ordinals
    assert _passage_rows(pk) == len(TOPICS)


def test_a_memory_within_the_bound_is_complete_at_once():
    short = " ".join(f"Note {n}: {t}." for n, t in enumerate(TOPICS[:3], start=1))
    assert len(passages.split(short)) <= passages.REMEMBER_PASSAGES
    (pk,) = _facts(short)
    assert Memory.objects.get(pk=pk).passages_complete
    assert _stored(pk).shape[0] == len(passages.split(short))
    assert "passages" not in embeddings_backfill(now=timezone.now())


def test_a_long_memory_is_found_right_after_remember():
    (pk, noise) = _facts(LONG, "The API gateway is written in Go.")
    assert not Memory.objects.get(pk=pk).passages_complete
    # Its words (a term of the last sentence, not yet embedded) and its leading passages.
    assert _ranked("Which feature flags expire after ninety days?")[:1] == [pk]
    assert _ranked("Which Kubernetes version does the staging cluster run?")[:1] == [pk]


def test_the_backfill_is_idempotent():
    (pk,) = _facts(LONG)
    assert embeddings_backfill(now=timezone.now())["passages"] == 1
    blob = bytes(Memory.objects.get(pk=pk).passages)
    again = embeddings_backfill(now=timezone.now())
    assert "passages" not in again and "unavailable" not in again
    assert bytes(Memory.objects.get(pk=pk).passages) == blob
    assert _passage_rows(pk) == len(TOPICS)


def test_the_embed_missing_pass_completes_them_and_a_second_run_finds_nothing():
    (pk,) = _facts(LONG)
    first, again = (
        passes_run(specs=(BY_NAME["embed_missing"],), scope=SCOPE, triggered_by="cli")[0]
        for _ in range(2)
    )
    assert first.status == "succeeded" and first.counts.get("passages") == 1
    assert "passages" not in again.counts
    assert Memory.objects.get(pk=pk).passages_complete
    assert _passage_rows(pk) == len(TOPICS)


def test_the_tool_description_states_the_bound():
    assert f"the first {passages.REMEMBER_PASSAGES} one by one" in descriptions.REMEMBER
    assert f"up to {passages.MAX_PASSAGES}" in descriptions.REMEMBER


def test_a_batch_embeds_at_most_its_call_total_and_the_backfill_the_rest():
    memories = [f"Batch {i}. " + LONG for i in range(30)]  # 11 passages each
    pks = _facts(*memories)
    stored = [_stored(pk).shape[0] for pk in pks]
    assert sum(stored) == passages.REMEMBER_CALL_PASSAGES
    # In order: the earlier memories keep their leading passages, the later ones wait.
    assert stored[:21] == [passages.REMEMBER_PASSAGES] * 21 and stored[21] == 1
    assert stored[22:] == [0] * 8
    assert not any(Memory.objects.get(pk=pk).passages_complete for pk in pks)

    assert embeddings_backfill(now=timezone.now())["passages"] == 30
    assert all(_stored(pk).shape[0] == len(passages.split(memories[0])) for pk in pks)
    assert f"{passages.REMEMBER_CALL_PASSAGES} in all for a batch" in descriptions.REMEMBER
