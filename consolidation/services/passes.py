"""The ordered pass registry (spec §8.3) and the entry points every adapter calls.

Celery tasks, management commands and tests all go through `passes_run`, so a pass behaves the
same whoever triggers it: under its lease, skipped when already covered, recorded in WorkerRun.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from consolidation.services.associations import associations_maintain
from consolidation.services.backfill import embeddings_backfill, episodes_form_pending
from consolidation.services.consolidated import schemas_consolidate
from consolidation.services.decay import memories_decay
from consolidation.services.maintenance import (
    duplicates_archive,
    feedback_reinforce,
    lexical_tidy,
    sessions_reap,
)
from consolidation.services.promotion import generalization_promote
from consolidation.services.prototypes import prototypes_cluster
from consolidation.services.runs import PassResult, PassSpec, pass_run, pass_run_waiting

CONSOLIDATION_PASSES: tuple[PassSpec, ...] = (
    PassSpec("form_pending_episodes", episodes_form_pending),
    PassSpec("embed_missing", embeddings_backfill),
    PassSpec("cluster_prototypes", prototypes_cluster),
    PassSpec("consolidate_schemas", schemas_consolidate),
    PassSpec("maintain_associations", associations_maintain),
    PassSpec("reinforce", feedback_reinforce),
    PassSpec("archive_duplicates", duplicates_archive),
    PassSpec("promote_generalization", generalization_promote, full_sweep_every=timedelta(days=1)),
    # Last: after the passes' own writes.
    PassSpec("tidy_lexical", lexical_tidy),
)
DECAY = PassSpec("decay_unused", memories_decay)
REAPER = PassSpec("reap_sessions", sessions_reap)
ALL_PASSES: tuple[PassSpec, ...] = (*CONSOLIDATION_PASSES, DECAY, REAPER)
BY_NAME = {spec.name: spec for spec in ALL_PASSES}


def passes_run(
    *,
    specs: tuple[PassSpec, ...],
    scope: str | None,
    triggered_by: str,
    requested_at: datetime | None = None,
    now: datetime | None = None,
    wait: bool = True,
) -> list[PassResult]:
    """Run the passes in order. wait=True (commands) waits out a busy lease; wait=False (tasks)
    reports `busy` at once so the task can retry later instead of blocking a worker slot."""
    run = pass_run_waiting if wait else pass_run
    return [
        run(spec=spec, scope=scope, triggered_by=triggered_by, requested_at=requested_at, now=now)
        for spec in specs
    ]
