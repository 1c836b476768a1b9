"""Passes 1 and 2 (spec §8.3): form episodes of ended sessions still pending, and embed rows
that were stored while the model was unavailable (`embedded_at` NULL), and give memories
embedded before passages existed their passage vectors (`passages` NULL), and memories a
remember call embedded only in part the rest of theirs (`passages_complete` False).

Episode formation itself lives in memory.services.episodes; this module only finds the work.
"""

from __future__ import annotations

import logging
from datetime import datetime

import numpy as np
from django.db import transaction
from django.db.models import Q, QuerySet

from consolidation.services.common import scoped
from memory import passages
from memory.indexing import index_embedded, index_passages, indexed_text
from memory.models import Episode, Memory, Procedure, Session
from memory.services.episodes import episodes_form

log = logging.getLogger(__name__)
BATCH = 256


def episodes_form_pending(
    *, now: datetime, scope: str | None = None, since: datetime | None = None
) -> dict[str, int]:
    """Ended sessions whose episodes were never formed (e.g. a crash between end and formation)."""
    pending = scoped(
        Session.objects.filter(
            status=Session.Status.ENDED, episodes_state=Session.EpisodesState.PENDING
        ),
        scope,
    )
    sessions = episodes = 0
    for session_id in list(pending.order_by("started_at", "pk").values_list("pk", flat=True)):
        formed = episodes_form(session_id=session_id, now=now)
        sessions += 1 if formed else 0
        episodes += formed
    return {"sessions": sessions, "episodes": episodes}


def _embed_kind(kind: str, queryset: QuerySet, now: datetime) -> int | None:
    """Embed every row of the queryset in batches; None if the model cannot be loaded."""
    done = 0
    while True:
        batch = list(queryset.filter(embedded_at__isnull=True).order_by("pk")[:BATCH])
        if not batch:
            return done
        texts = [indexed_text(row) for row in batch]
        embedded = passages.encoder_for(kind)(texts)
        if embedded is None:
            return None
        with transaction.atomic():
            for row, item in zip(batch, embedded, strict=True):
                type(row).objects.filter(pk=row.pk, embedded_at__isnull=True).update(
                    **passages.columns(kind, item), embedded_at=now
                )
                index_embedded(row=row, embedded=item)
        done += len(batch)


def _embed_passages(queryset: QuerySet) -> int | None:
    """Memories whose passages are missing (embedded before passages existed) or incomplete (a
    remember call embeds only the leading ones) get the rest; None if the model is unavailable.

    Claimed conditionally: a row another worker completed meanwhile is left as it is."""
    done = 0
    pending = queryset.filter(embedded_at__isnull=False).filter(
        Q(passages__isnull=True) | Q(passages_complete=False)
    )
    while True:
        batch = list(
            pending.order_by("pk").values_list("pk", "scope", "content", "passages")[:BATCH]
        )
        if not batch:
            return done
        have = [passages.from_blob(blob) for *_, blob in batch]
        rest = passages.encode_rest(
            [content for _, _, content, _ in batch],
            [0 if known is None else len(known) for known in have],
        )
        if rest is None:
            return None
        with transaction.atomic():
            for (pk, scope, _, _), known, more in zip(batch, have, rest, strict=True):
                first = 0 if known is None else len(known)
                whole = more if known is None else np.concatenate([known, more])
                claimed = (
                    Memory.objects.filter(pk=pk)
                    .filter(Q(passages__isnull=True) | Q(passages_complete=False))
                    .update(passages=passages.to_blob(whole), passages_complete=True)
                )
                if claimed:
                    index_passages(memory_pk=pk, scope=scope, vectors=more, first=first)
        done += len(batch)


def embeddings_backfill(
    *, now: datetime, scope: str | None = None, since: datetime | None = None
) -> dict[str, int]:
    counts = {"memories": 0, "episodes": 0, "procedures": 0}
    for key, kind, model in (
        ("memories", "memory", Memory),
        ("episodes", "episode", Episode),
        ("procedures", "procedure", Procedure),
    ):
        done = _embed_kind(kind, scoped(model.objects.all(), scope), now)
        if done is None:
            log.warning("embedding model unavailable; rows stay lexical-only until it loads")
            counts["unavailable"] = 1
            break
        counts[key] = done
    else:
        done = _embed_passages(scoped(Memory.objects.all(), scope))
        if done is None:
            counts["unavailable"] = 1
        elif done:
            counts["passages"] = done
    return counts
