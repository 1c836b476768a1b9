"""Operators' metrics: Prometheus counters and histograms, and the `/metrics` view that serves them.

Lives here: the metric definitions (`PrometheusSink`, installed as memory.instruments' sink by
each server process and by the embedded worker), the scrape-time gauges of memories and
sessions per scope kind, the `/metrics` view with its Host policy and bearer-token check, and
the per-run folder `slowave up` prepares for multiprocess mode.

Why multiprocess mode: `slowave up --workers N` answers from N uvicorn processes and runs
consolidation in the embedded Celery worker (another process, whose pool child forks again),
so no one process sees every count. With PROMETHEUS_MULTIPROC_DIR set before anything imports
prometheus_client, each process writes its samples to its own memory-mapped file there, and a
scrape, whichever process answers it, sums every file. `slowave up` empties the folder at start
(counts begin at zero with each run) and sets the variable that its children inherit. Only
counters and histograms are kept this way: a process that exits leaves totals that must still
count, so there is no live gauge whose files would need `mark_process_dead`; the gauges are
computed from the database at scrape time instead. Without the variable (a lone uvicorn, the
test client) the metrics are this process's own.

Not here: where measurements are taken (memory.instruments' callers), the auth decision
(memory.services.tokens), the Host rule (slowave_site.host_policy).
"""

from __future__ import annotations

import hmac
import logging
import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from memory import instruments

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
CALL_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
EMBED_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)
PASS_BUCKETS = (0.01, 0.1, 0.5, 1.0, 5.0, 15.0, 60.0, 300.0, 900.0)
_install_lock = threading.Lock()
logger = logging.getLogger(__name__)


def prepare_multiprocess_dir(path: Path) -> None:
    """An empty folder for this run's samples, named in the environment the children inherit.
    Called by `slowave up` before it starts any process that records."""
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(mode=0o700, parents=True)
    os.environ[MULTIPROC_ENV] = str(path)


def multiprocess_dir() -> str | None:
    return os.environ.get(MULTIPROC_ENV) or None


class PrometheusSink:
    """memory.instruments' sink: each measurement is a counter increment and a histogram
    observation (a few microseconds; in multiprocess mode a write to a mapped file).

    A sample the disk has no room for is dropped, never the call that made it: the server
    goes on answering (its own writes then fail as `storage_full`), one warning says so, and
    recording resumes once space is freed.
    """

    def __init__(self) -> None:
        self._dropping = False
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.registry = CollectorRegistry(auto_describe=True)
        reg = self.registry
        self.calls = Counter(
            "slowave_calls",
            "Agent calls answered, by surface (mcp, rest), tool and outcome code (ok or the "
            "envelope's error code).",
            ["surface", "tool", "code"],
            registry=reg,
        )
        self.call_seconds = Histogram(
            "slowave_call_duration_seconds",
            "Time to answer an agent call, waiting for a worker thread included.",
            ["surface", "tool"],
            buckets=CALL_BUCKETS,
            registry=reg,
        )
        self.embed_seconds = Histogram(
            "slowave_embedding_duration_seconds",
            "Time of one embedding request (a batch of texts) to the model.",
            buckets=EMBED_BUCKETS,
            registry=reg,
        )
        self.embedded = Counter("slowave_embedded_texts", "Texts embedded.", registry=reg)
        self.passes = Counter(
            "slowave_worker_passes",
            "Consolidation passes, by pass and outcome (succeeded, failed, covered, busy).",
            ["pass_name", "status"],
            registry=reg,
        )
        self.pass_seconds = Histogram(
            "slowave_worker_pass_duration_seconds",
            "Duration of consolidation passes that ran (succeeded or failed).",
            ["pass_name"],
            buckets=PASS_BUCKETS,
            registry=reg,
        )

    def call_finished(self, *, surface: str, tool: str, code: str, seconds: float) -> None:
        with self._recording():
            self.calls.labels(surface, tool, code).inc()
            self.call_seconds.labels(surface, tool).observe(seconds)

    def embedding_finished(self, *, texts: int, seconds: float) -> None:
        with self._recording():
            self.embed_seconds.observe(seconds)
            self.embedded.inc(texts)

    def pass_finished(self, *, name: str, status: str, seconds: float) -> None:
        with self._recording():
            self.passes.labels(name, status).inc()
            if status in ("succeeded", "failed"):
                self.pass_seconds.labels(name).observe(seconds)

    @contextmanager
    def _recording(self) -> Iterator[None]:
        try:
            yield
        except OSError as exc:  # the sample file could not grow (slowave_site.metrics_files)
            if not self._dropping:
                logger.warning("metrics: dropping samples until there is space again (%s)", exc)
            self._dropping = True
        else:
            self._dropping = False


def install_metrics() -> PrometheusSink:
    """Make this process record into Prometheus metrics (once; later calls return the same)."""
    with _install_lock:
        sink = instruments.installed()
        if isinstance(sink, PrometheusSink):
            return sink
        from prometheus_client import disable_created_metrics

        from slowave_site.metrics_files import back_sample_files

        back_sample_files()  # before the first metric opens a sample file
        disable_created_metrics()  # `*_created` series only double what a scraper knows
        sink = PrometheusSink()
        instruments.install(sink)
        return sink


class ScopeKindCollector:
    """Gauges read from the database when scraped: memories and sessions per scope kind."""

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        from memory.selectors.counts import scope_kind_counts

        counts = scope_kind_counts()
        for name, rows, what in (
            ("slowave_memories", counts.memories, "Memories"),
            ("slowave_sessions", counts.sessions, "Sessions"),
        ):
            family = GaugeMetricFamily(
                name, f"{what} stored, by scope kind and status.", labels=["scope_kind", "status"]
            )
            for row in rows:
                family.add_metric([row.scope_kind, row.status], row.count)
            yield family


def exposition(accept: str | None) -> tuple[bytes, str]:
    """What a scrape gets (body, content type): every process's samples (or this one's) and
    the gauges, in the format the scraper's Accept header asks for (the library decides)."""
    from prometheus_client import CollectorRegistry
    from prometheus_client.exposition import choose_encoder
    from prometheus_client.multiprocess import MultiProcessCollector

    sink = install_metrics()
    registry = CollectorRegistry(auto_describe=False)
    folder = multiprocess_dir()
    if folder:
        MultiProcessCollector(registry, path=folder)
    else:
        registry.register(sink.registry)
    registry.register(ScopeKindCollector())
    encode, content_type = choose_encoder(accept or "")
    return encode(registry), content_type


def _envelope(error: Any, status: int) -> JsonResponse:
    return JsonResponse({"ok": False, "error": error.as_error()}, status=status)


def _authorised(request: HttpRequest) -> None:
    """Returns for a scraper with SLOWAVE_METRICS_TOKEN or any caller `/api/` accepts;
    raises Unauthorized otherwise."""
    from memory.services.tokens import bearer_of, caller_authenticate

    token = bearer_of(request.headers.get("Authorization"))
    wanted = settings.SLOWAVE_METRICS_TOKEN
    if token and wanted and hmac.compare_digest(token.encode(), wanted.encode()):
        return
    caller_authenticate(
        token=token, remote_addr=request.META.get("REMOTE_ADDR"), now=timezone.now()
    )


@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    """`GET /metrics` in Prometheus' text format, for callers `/api/` would accept (its Host
    and Origin rule is applied before, by slowave_site.host_policy's middleware)."""
    from memory.errors import SlowaveError
    from slowave_site.api import status_for

    try:
        _authorised(request)
    except SlowaveError as exc:
        response = _envelope(exc, status_for(exc.code))
        response["WWW-Authenticate"] = "Bearer"
        return response
    body, content_type = exposition(request.headers.get("Accept"))
    return HttpResponse(body, content_type=content_type)
