"""Clustering benchmark: `run(episodes)` times pass 3 (cluster_prototypes) on synthetic episodes.

Synthetic data, never the user's memory: a scratch SQLite database (default connection pointed
at a temporary file, restored afterwards), sessions of ten episodes, and unit vectors drawn
around per-scope topic centres (pairwise cosine ~0.8 inside a topic) plus a share of unrelated
ones. The pass runs until every episode has a prototype (it clusters at most 2,000 new episodes
per scope per run), so episodes/s covers joins, agglomerative clustering and all writes.
The `bench consolidate` command (slowave_site/management/commands/bench.py) is a thin caller.
"""

from __future__ import annotations

import resource
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from django.core.management import call_command
from django.db import connections, transaction
from django.utils import timezone

from consolidation.services.passes import BY_NAME, passes_run
from memory.embeddings import DIMENSIONS, to_blob
from memory.models import Episode, Event, Prototype, Session

EPISODES_PER_SESSION = 10
TOPIC_SIZE = 20  # episodes per synthetic topic
NOISE = 0.025  # per-dimension spread: cosine ~0.9 to the topic centre, ~0.8 between members
UNRELATED_SHARE = 0.2
BATCH = 2_000


@contextmanager
def _scratch_database(path: str | None) -> Iterator[str | None]:
    """The default connection on `path`, or on a temporary file removed afterwards."""
    connection = connections["default"]
    original = connection.settings_dict["NAME"]
    scratch = None if path else tempfile.mkdtemp(prefix="slowave-bench-consolidate-")
    connection.close()
    connection.settings_dict["NAME"] = (
        path if scratch is None else str(Path(scratch) / "bench.sqlite3")
    )
    try:
        call_command("migrate", verbosity=0)
        yield path
    finally:
        connection.close()
        connection.settings_dict["NAME"] = original
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)


def synthetic_vectors(count: int, rng: np.random.Generator) -> np.ndarray:
    """Unit vectors: topics of ~TOPIC_SIZE near-duplicates, plus UNRELATED_SHARE loners."""
    topics = max(1, count // TOPIC_SIZE)
    centres = rng.normal(size=(topics, DIMENSIONS))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    vectors = centres[rng.integers(0, topics, size=count)] + rng.normal(
        scale=NOISE, size=(count, DIMENSIONS)
    )
    loners = rng.random(count) < UNRELATED_SHARE
    vectors[loners] = rng.normal(size=(int(loners.sum()), DIMENSIONS))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def _session(index: int, number: int, scope: str, now: datetime) -> Session:
    return Session(
        id=f"sess_{index:04x}{number:012x}",
        scope=scope,
        scope_kind="project",
        task="bench",
        initial_goal="bench",
        status=Session.Status.ENDED,
        episodes_state=Session.EpisodesState.FORMED,
        started_at=now,
        last_activity_at=now,
        ended_at=now,
    )


def _turn(session: Session, row: int, now: datetime) -> Event:
    seq = row % EPISODES_PER_SESSION + 1
    kind = Event.Kind.USER_MESSAGE
    return Event(session=session, seq=seq, kind=kind, content=f"turn {row}", recorded_at=now)


def _episode(event: Event, vector: np.ndarray, now: datetime) -> Episode:
    return Episode(
        session=event.session,
        scope=event.session.scope,
        content=f"User: {event.content}",
        first_event=event,
        event_ids=[event.pk],
        recorded_at=now,
        embedding=to_blob(vector),
        embedded_at=now,
    )


def _seed_scope(index: int, count: int, rng: np.random.Generator, now: datetime) -> None:
    scope = f"project:bench-{index:04d}"
    vectors = synthetic_vectors(count, rng)
    total = (count + EPISODES_PER_SESSION - 1) // EPISODES_PER_SESSION
    sessions = [_session(index, number, scope, now) for number in range(total)]
    Session.objects.bulk_create(sessions, batch_size=BATCH)
    for start in range(0, count, BATCH):
        rows = range(start, min(count, start + BATCH))
        with transaction.atomic():
            turns = [_turn(sessions[row // EPISODES_PER_SESSION], row, now) for row in rows]
            events = Event.objects.bulk_create(turns)
            pairs = zip(rows, events, strict=True)
            Episode.objects.bulk_create(
                [_episode(event, vectors[row], now) for row, event in pairs]
            )


def _reset_peak_rss() -> bool:
    """Linux lets a process reset its RSS high-water mark; then the peak is the pass's own."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _peak_rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cluster_until_done() -> tuple[int, float]:
    runs, started = 0, time.perf_counter()
    while Episode.objects.filter(prototype__isnull=True).exists():
        (result,) = passes_run(
            specs=(BY_NAME["cluster_prototypes"],), scope=None, triggered_by="cli"
        )
        if result.status != "succeeded":
            raise RuntimeError(f"cluster_prototypes {result.status}: {result.error}")
        runs += 1
    return runs, time.perf_counter() - started


def run(
    episodes: int, *, scopes: int = 10, seed: int = 7, database: str | None = None
) -> dict[str, Any]:
    """Seed synthetic episodes over `scopes` scopes, cluster them all, report the rate."""
    if episodes < 1 or scopes < 1:
        raise ValueError("episodes and scopes must be positive")
    rng, now = np.random.default_rng(seed), timezone.now()
    with _scratch_database(database) as path:
        seeding = time.perf_counter()
        for index in range(scopes):
            _seed_scope(index, episodes // scopes + (index < episodes % scopes), rng, now)
        seeded_in = time.perf_counter() - seeding
        import sklearn.cluster  # noqa: F401  (a one-off import cost, not clustering throughput)

        isolated = _reset_peak_rss()
        runs, seconds = _cluster_until_done()
        prototypes = Prototype.objects.count()
        multi = Prototype.objects.filter(support_count__gt=1).count()
    return {
        "pass": "cluster_prototypes",
        "episodes": episodes,
        "scopes": scopes,
        "pass_runs": runs,
        "seconds": round(seconds, 3),
        "episodes_per_second": round(episodes / seconds, 1) if seconds else None,
        "prototypes": prototypes,
        "prototypes_with_several_members": multi,
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        "peak_rss_is_pass_only": isolated,
        "seed_seconds": round(seeded_in, 3),
        "database": path,
    }
