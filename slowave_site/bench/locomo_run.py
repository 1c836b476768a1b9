"""What ``slowave bench locomo`` runs around ``run_locomo``: the database (temporary, ``--db``
or a kept ``--store``), the ranking-policy overrides and Slowave's runner.

Without ``--store`` each conversation is ingested then asked, in turn, as it always was. With
it, every selected conversation is ingested first (consolidation pass included) into the kept
store, or the ingest is skipped when the store's manifest matches, and the questions are then
asked on a scratch copy (store.py). Ingest always runs under the unmodified policy.

`ingest` names the Slowave methods: `remember` (method "slowave": each turn remembered as a
fact) and `import` (method "slowave-import": each session imported as a transcript into a
scope of its own, locomo_import.py). A kept store holds each conversation's imported scope as
an item of its own (`<sample_id>:import`), so a store kept for both methods re-ranks both at
the cost of the questions, and one kept for `remember` alone still serves it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memory.retrieval.policy import RankingPolicy
from slowave_site.bench import overrides
from slowave_site.bench.locomo import run_locomo, select_samples
from slowave_site.bench.locomo_data import Sample
from slowave_site.bench.locomo_import import import_sample
from slowave_site.bench.results import QuestionResult
from slowave_site.bench.slowave import ask_sample, consolidate_scope, ingest_sample, scope_for
from slowave_site.bench.store import (
    IngestSpec,
    Kept,
    database,
    file_sha256,
    ingested,
    scratch_database,
)

Log = Callable[[str], None]
INGEST_MODES = {"remember": "slowave", "import": "slowave-import"}
IMPORTED = ":import"  # a kept store's item for a conversation's imported scope


def _import_scope(sample: Sample) -> str:
    return f"{scope_for(sample)}-import"


def _options(consolidate: bool) -> dict[str, Any]:
    """The ingest options a kept store must match."""
    from django.conf import settings

    from memory import embeddings
    from memory.vectors import backend_name

    return {
        "ingest": "remember",
        "consolidation": consolidate,
        "embedder": embeddings.get_embedder().name,
        "vector_backend": backend_name(),
        "min_relevance": settings.SLOWAVE_MIN_RELEVANCE,  # ingest's activate exposures
    }


def _runner(
    consolidate: bool, ranking: RankingPolicy, kept: Mapping[str, Mapping[str, Sequence[str]]]
) -> Callable[[Sample], list[QuestionResult]]:
    """Ingest (unless kept holds the conversation) under the plain policy, ask under ranking."""

    def run(sample: Sample) -> list[QuestionResult]:
        behind = kept.get(sample.sample_id)
        if behind is None:
            behind = ingest_sample(sample, consolidate_scope if consolidate else None)
        with overrides.installed(ranking):
            return ask_sample(sample, behind)

    return run


def _import_runner(
    consolidate: bool,
    ranking: RankingPolicy,
    log: Log,
    kept: Mapping[str, Mapping[str, Sequence[str]]],
) -> Callable[[Sample], list[QuestionResult]]:
    """Import the conversation's sessions as transcripts under the plain policy (unless kept
    holds them), ask under ranking, in a scope apart from the remembered one."""

    def run(sample: Sample) -> list[QuestionResult]:
        scope = _import_scope(sample)
        behind = kept.get(sample.sample_id + IMPORTED)
        if behind is None:
            behind = import_sample(sample, scope, consolidate_scope if consolidate else None, log)
        with overrides.installed(ranking):
            return ask_sample(sample, behind, scope)

    return run


@contextmanager
def _prepared(
    path: str,
    samples: Sequence[Sample],
    *,
    consolidate: bool,
    db: str | None,
    store: str | None,
    rebuild: bool,
    log: Log,
    modes: Sequence[str] = ("remember",),
    bench: str = "locomo",
) -> Iterator[tuple[Kept, bool]]:
    """The default connection on the bench database; the kept mapping ({} without --store)
    and whether the kept store's ingest was reused."""
    if store is None:
        with database(Path(db)) if db is not None else scratch_database():
            yield {}, False
        return
    by_id = {s.sample_id: s for s in samples}
    ran: list[str] = []

    passes = consolidate_scope if consolidate else None

    def ingest(items: Sequence[str]) -> Kept:
        kept: Kept = {}
        for item in items:
            sample_id, imported, _ = item.partition(IMPORTED)
            sample = by_id[sample_id]
            log(f"slowave: ingest {item} ({len(sample.turns)} turns)")
            ran.append(item)
            kept[item] = (
                import_sample(sample, _import_scope(sample), passes, log)
                if imported
                else ingest_sample(sample, passes)
            )
        return kept

    items = [i for i in by_id if "remember" in modes]
    items += [i + IMPORTED for i in by_id if "import" in modes]
    spec = IngestSpec(
        bench=bench,
        data_path=os.path.abspath(path),
        data_sha256=file_sha256(path),
        items=tuple(items),
        options=_options(consolidate),
    )
    with ingested(spec, ingest, store=store, rebuild=rebuild, log=log) as kept:
        yield kept, not ran


def run_locomo_bench(
    path: str,
    *,
    baselines: Sequence[str] = (),
    samples: Sequence[str] = (),
    slowave: bool = True,
    consolidate: bool = True,
    db: str | None = None,
    store: str | None = None,
    rebuild: bool = False,
    policy: Sequence[str] = (),
    ingest: Sequence[str] = ("remember",),
    out: str | None = None,
    details: bool = False,
    log: Log | None = None,
    bench: str = "locomo",
) -> dict[str, Any]:
    """The LoCoMo report of spec §13.1, with the store and policy recorded in its config.

    ``bench`` names the kept store's data set: a file in LoCoMo's layout that is not LoCoMo
    (MemoryCode) is kept under its own name."""
    say = log or (lambda message: None)
    if db is not None and store is not None:
        raise ValueError("--db and --store are exclusive: a kept store is its own database")
    modes = list(dict.fromkeys(ingest or ("remember",)))
    unknown = [m for m in modes if m not in INGEST_MODES]
    if unknown:
        raise ValueError(f"unknown ingest {unknown[0]!r}; choose from {', '.join(INGEST_MODES)}")
    ranking = overrides.resolve(policy)  # before any ingest: a typo must not cost the ingest
    selected = select_samples(path, samples)
    config: dict[str, Any] = {
        **_options(consolidate),
        "min_relevance": ranking.admission.floor,
        "relative_margin": ranking.admission.relative_margin,
        "policy": overrides.describe(ranking, policy),
        "store": os.path.abspath(store) if store else None,
        "ingest": modes,
    }
    common: dict[str, Any] = dict(
        baselines=baselines, samples=samples, out=out, details=details, log=say, config=config
    )
    if not slowave:
        return run_locomo(path, **common)
    with _prepared(
        path,
        selected,
        consolidate=consolidate,
        db=db,
        store=store,
        rebuild=rebuild,
        log=say,
        modes=modes,
        bench=bench,
    ) as (kept, reused):
        config["ingest_reused"] = reused
        runners = {
            "slowave": _runner(consolidate, ranking, kept),
            "slowave-import": _import_runner(consolidate, ranking, say, kept),
        }
        chosen = {INGEST_MODES[m]: runners[INGEST_MODES[m]] for m in modes}
        return run_locomo(path, slowave_runners=chosen, **common)
