"""`slowave bench scale --memories N` (spec §13.2): ingest rate and lookup latency at size."""

from __future__ import annotations

import os
import random
import resource
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from memory import embeddings, lexical
from memory.engines import storage_engine
from memory.models import Memory
from memory.schemas import MEMORY_TYPES, ActivateIn, RememberIn, RememberItem
from memory.services.activate import session_activate
from memory.services.remember import memory_remember
from memory.vectors import backend_name
from slowave_site.bench.metrics import percentile_of
from slowave_site.bench.scale_ask import CLIENT, ask
from slowave_site.bench.scale_cold import cold_start

SUBJECTS = [
    "billing",
    "search",
    "checkout",
    "inventory",
    "shipping",
    "accounts",
    "reports",
    "pricing",
    "auth",
    "gateway",
    "ledger",
    "notifications",
    "analytics",
    "catalog",
]
PARTS = [
    "queue",
    "cache",
    "database",
    "worker",
    "scheduler",
    "index",
    "api",
    "frontend",
    "cron job",
    "proxy",
    "migration",
    "test suite",
]
CLAIMS = [
    "retries failed requests {n} times",
    "uses a timeout of {n} seconds",
    "logs to {o}",
    "is deployed on {o}",
    "is owned by team {o}",
    "stores data in {o}",
    "scales to {n} replicas",
    "alerts on-call when errors exceed {n} per minute",
    "is tested with {o}",
    "depends on {o}",
]
OBJECTS = [
    "Redis",
    "PostgreSQL",
    "Kafka",
    "Atlas",
    "Kubernetes",
    "S3",
    "Datadog",
    "pytest",
    "nginx",
    "Vault",
    "Orion",
    "Helix",
    "BigQuery",
    "RabbitMQ",
]


def synthetic(n: int, seed: int = 13) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        claim = rng.choice(CLAIMS).format(n=rng.randint(2, 500), o=rng.choice(OBJECTS))
        out.append(
            (
                f"The {rng.choice(SUBJECTS)} {rng.choice(PARTS)} {claim} (note {i})",
                MEMORY_TYPES[i % len(MEMORY_TYPES)],
            )
        )
    return out


def _timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def _summary(values: list[float]) -> dict[str, float]:
    return {f"p{p}": round(percentile_of(values, p), 2) for p in (50, 95, 99)}


def scope_names_for(scopes: int) -> list[str]:
    return [f"project:scale-{i}" for i in range(scopes)]


def ingest_synthetic(*, memories: int, scopes: int = 10, log=print) -> list[str]:
    """Remember `memories` synthetic claims, 256 at a time, spread over `scopes` scopes;
    the scopes' names, in order."""
    scope_names = scope_names_for(scopes)
    _ingest(memories, scope_names, log)
    return scope_names


def _ingest(memories: int, scope_names: list[str], log: Callable[[str], Any]) -> float:
    """Seconds to remember the synthetic memories, 256 a call, the scopes in turn."""
    rows = synthetic(memories)
    sessions = {
        s: session_activate(
            data=ActivateIn(task="seed", initial_goal="seed", scope=s),
            client=CLIENT,
            now=timezone.now(),
        )["session_id"]
        for s in scope_names
    }
    started = time.perf_counter()
    for start in range(0, memories, 256):
        scope = scope_names[(start // 256) % len(scope_names)]
        batch = [
            RememberItem.model_validate({"content": c, "type": t})
            for c, t in rows[start : start + 256]
        ]
        memory_remember(
            data=RememberIn(scope=scope, session_id=sessions[scope], memories=batch),
            now=timezone.now(),
        )
        if start and start % (256 * 40) == 0:
            log(f"ingested {start} memories")
    return time.perf_counter() - started


def run_scale(
    *,
    memories: int,
    scopes: int = 10,
    queries: int = 200,
    cold_env: dict[str, str] | None = None,
    model_dir: str | None = None,
    log=print,
) -> dict[str, Any]:
    """Ingest `memories` synthetic memories over `scopes` scopes, then time `queries` questions;
    a store that holds an earlier run's memories (`--db`) is asked again without ingesting.
    `cold_env` (the environment that names this store to a server): also spawn cold processes
    over it (scale_cold), one with the store's embedder alone and, given `model_dir`, one that
    loads the ONNX model there too; their spawn-to-first-recall and RSS are the report's
    `cold` rows."""
    scope_names = scope_names_for(scopes)
    held = Memory.objects.filter(scope__in=scope_names).count()
    if held not in (0, memories):
        raise ValueError(
            f"--db holds {held} memories of an earlier run, not {memories}: "
            f"give --memories {held} to ask it again, or a new file"
        )
    ingest_seconds = None if held else _ingest(memories, scope_names, log)
    ingest_load = [round(x, 2) for x in os.getloadavg()]
    # What the worker's tidy_lexical pass does once writes have left the index in segments
    # (a store asked again was merged by the run that filled it, unless an older one did).
    started = time.perf_counter()
    with transaction.atomic():
        merged = lexical.tidy()
    tidy_seconds = time.perf_counter() - started
    rng = random.Random(7)
    questions = [
        f"What does the {rng.choice(SUBJECTS)} {rng.choice(PARTS)} use?" for _ in range(queries)
    ]
    embed = [_timed(partial(embeddings.encode, [q])) for q in questions]
    activate_ms, recall_ms = [], []
    for i, question in enumerate(questions):
        opened_ms, recalled_ms = ask(question, scope_names[i % scopes])
        activate_ms.append(opened_ms)
        recall_ms.append(recalled_ms)
    db_file = connection.settings_dict["NAME"]
    cold = []
    if cold_env is not None:
        connection.close()  # the child opens its own; SQLite's file is left to it meanwhile
        for model in (None, model_dir) if model_dir else (None,):
            log(f"cold process{' with the model' if model else ''}")
            cold.append(cold_start(env=cold_env, scope=scope_names[0], model_dir=model))
    return {
        "memories": memories,
        "scopes": scopes,
        "queries": queries,
        "embedder": embeddings.get_embedder().name,
        "database": storage_engine().name,
        "vector_backend": backend_name(),
        "ingest_per_second": round(memories / ingest_seconds, 1) if ingest_seconds else None,
        "store_reused": ingest_seconds is None,
        "load_after_ingest": ingest_load,
        "lexical_segments_merged": merged,
        "lexical_tidy_seconds": round(tidy_seconds, 2),
        "query_embedding_ms": _summary(embed),
        "activate_ms": _summary(activate_ms),
        "recall_ms": _summary(recall_ms),
        "recall_overhead_p50_ms": round(percentile_of(recall_ms, 50) - percentile_of(embed, 50), 2),
        "db_bytes": os.path.getsize(db_file) if os.path.exists(db_file) else None,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "cold": cold,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
