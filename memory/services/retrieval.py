"""Publishing a retrieval: frozen catalog, pages, cursors and the exposure ledger (spec §6.7)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from memory import ids
from memory.embeddings import get_embedder
from memory.engines import bulk, storage_engine
from memory.models import (
    Cursor,
    Episode,
    Exposure,
    Memory,
    Procedure,
    Retrieval,
    Session,
)
from memory.replies.verbs import EvidenceOut
from memory.retrieval.budget import Budget, build_budget_pages, evidence_within
from memory.retrieval.engine import Ranking, rank
from memory.retrieval.paging import Entry, Page, accessible_field, build_pages
from memory.retrieval.policy import RankingPolicy
from memory.retrieval.render import (
    episode_evidence,
    episode_payload,
    episode_ref,
    event_evidence,
    memory_payload,
    procedure_full,
    procedure_preview,
    procedures_feedback,
)
from memory.vectors.reading import one_reading

EVIDENCE_LIMIT = 8


@functools.lru_cache(maxsize=16)
def _policy_record(policy: RankingPolicy) -> tuple[str, dict[str, Any]]:
    """The policy's version and values as every retrieval records them: a policy is frozen,
    and writing it out (1.6 ms) cost more than the rest of publishing a retrieval. Read-only:
    the same dict goes into every retrieval's params."""
    return policy.version, policy.as_dict()


def _entries(
    ranking: Ranking, *, scope: str, query: str, kind: str
) -> tuple[list[Entry], list[Entry], dict[str, list[Entry]]]:
    direct = [
        Entry(
            ref=ids.memory_ref(it.obj.pk),
            kind="memory",
            pathway="direct",
            currency="historical" if it.obj.status == Memory.Status.STALE else "current",
            scores=it.details,
            payload=memory_payload(it.obj, scope=scope, query=query, pathway="direct"),
            source=it.obj.content,
        )
        for it in ranking.memories
    ]
    associated: dict[str, list[Entry]] = {}
    payloads: dict[int, dict] = {}  # a neighbour of several direct items renders once
    for parent, found in ranking.associated.items():
        associated[ids.memory_ref(parent)] = [
            Entry(
                ref=ids.memory_ref(m.pk),
                kind="memory",
                pathway="associated",
                currency="current",
                scores={"weight": w, "topical": round(t, 4)},
                parent=ids.memory_ref(parent),
                weight=w,
                source=m.content,
                payload=payloads.get(m.pk)
                or payloads.setdefault(
                    m.pk, memory_payload(m, scope=scope, query=query, pathway="associated")
                ),
            )
            for m, w, t in found
        ]
    direct = _with_history(direct, ranking, query)
    render = procedure_preview if kind == "activate" else procedure_full
    feedback = procedures_feedback([it.obj.pk for it in ranking.procedures])
    procedures = [
        Entry(
            ref=it.obj.pk,
            kind="procedure",
            pathway="direct",
            currency="current",
            scores=it.details,
            payload=render(it.obj, scope=scope, rows=feedback.get(it.obj.pk, [])),
        )
        for it in ranking.procedures
    ]
    return direct, procedures, associated


def _depth_filled(entry: Entry) -> bool:
    contributions = cast(list[list[object]], entry.scores.get("signals", []))
    return any(name == "depth" for name, *_ in contributions)


def _with_history(direct: list[Entry], ranking: Ranking, query: str) -> list[Entry]:
    """The direct memories with the imported turns that passed the floor merged in by score;
    each list keeps its own order, and without imported history nothing changes."""
    if not ranking.history:
        return direct
    turns = [
        Entry(
            ref=episode_ref(it.obj.pk),
            kind="episode",
            pathway="direct",
            currency="current",
            scores=it.details,
            payload=episode_payload(it.obj, query=query),
            source=it.obj.content,
        )
        for it in ranking.history
    ]
    # A turn consolidation already made into a memory shown here shows as that memory alone.
    shown = [pk for pk in (ids.memory_pk(e.ref) for e in direct) if pk is not None]
    covered = set(
        Episode.objects.filter(
            pk__in=[it.obj.pk for it in ranking.history], prototype__memory_id__in=shown
        ).values_list("pk", flat=True)
    )
    turns = [t for t, it in zip(turns, ranking.history, strict=True) if it.obj.pk not in covered]
    merged: list[Entry] = []
    while direct and turns:
        ahead = cast(float, turns[0].scores["score"]) > cast(
            float, direct[0].scores.get("score", 0.0)
        )
        merged.append(turns.pop(0) if ahead else direct.pop(0))
    return merged + direct + turns


def _evidence(
    ranking: Ranking, first_page: list[dict[str, Any]], *, full: bool
) -> tuple[list[EvidenceOut], bool]:
    """Provenance events of the first page's memories, then episodes matched directly."""
    refs = [pk for pk in (ids.memory_pk(m["ref"]) for m in first_page) if pk is not None]
    events = storage_engine().source_events(refs)
    items = [
        event_evidence(events[pk], pk, full) for pk in refs if pk in events
    ]
    # Episodes only ever fill what the provenance left: skip ranking them when it is full.
    # A turn already on the page as history is not repeated as evidence.
    shown = {m["ref"] for m in first_page if m["kind"] == "episode"}
    if len(items) <= EVIDENCE_LIMIT:
        items += [
            episode_evidence(it.obj, full)
            for it in ranking.episodes()
            if episode_ref(it.obj.pk) not in shown
        ]
    return items[:EVIDENCE_LIMIT], len(items) > EVIDENCE_LIMIT


@dataclass
class Prepared:
    """A ranked, frozen catalog not yet written: computed outside the write transaction."""

    kind: str
    cue: str
    evidence_mode: str
    ranking: Ranking
    catalog: dict[str, Any]
    relevant_total: int
    max_tokens: int | None = None


def retrieval_prepare(
    *,
    scope: str,
    kind: str,
    cue: str,
    evidence_mode: str,
    now: datetime,
    max_tokens: int | None = None,
) -> Prepared:
    """Rank and build the catalog (reads only; the query embedding happens here), so the
    caller's write transaction, and the database's write lock, stay short.

    `max_tokens`: the agent's budget per page, frozen into the pages so cursors replay it."""
    with one_reading():  # the pools' searches of a kind check its table for new rows once
        return _prepared(scope, kind, cue, evidence_mode, now, max_tokens)


def _prepared(
    scope: str, kind: str, cue: str, evidence_mode: str, now: datetime, max_tokens: int | None
) -> Prepared:
    ranking = rank(scope=scope, cue=cue, kind=kind, now=now)
    direct, procedures, associated = _entries(ranking, scope=scope, query=cue, kind=kind)
    budget = None if max_tokens is None else Budget(max_tokens, cue)
    built: list[Page] = (
        build_pages(direct, procedures, associated, ranking.policy.paging)
        if budget is None
        else build_budget_pages(direct, procedures, associated, ranking.policy.paging, budget)
    )
    pages = [vars(p) for p in built]
    catalog: dict[str, Any] = {"pages": pages}
    if kind == "recall":
        evidence, truncated = _evidence(ranking, pages[0]["memories"], full=evidence_mode == "full")
        if budget is not None:
            first = pages[0]["memories"] + pages[0]["procedures"]
            evidence, cut = evidence_within(evidence, budget.chars - sum(i["chars"] for i in first))
            truncated = truncated or cut
        catalog["evidence"], catalog["evidence_truncated"] = evidence, truncated
    # Spec §7.5.6: the admitted direct items; recall's depth fill under the floor is not.
    admitted = sum(1 for e in direct if not _depth_filled(e))
    return Prepared(kind, cue, evidence_mode, ranking, catalog, admitted, max_tokens)


def retrieval_publish(
    *, session: Session, prepared: Prepared, query: str, now: datetime
) -> tuple[Retrieval, dict[str, Any]]:
    """Freeze the prepared catalog and record page one's exposures; returns page one."""
    policy_version, policy_values = _policy_record(prepared.ranking.policy)
    retrieval = bulk.create(
        Retrieval,
        id=ids.new_retrieval_id(prepared.kind),
        kind=prepared.kind,
        session=session,
        scope=session.scope,
        query=query,
        facets=prepared.ranking.facets,
        policy_version=policy_version,
        catalog=prepared.catalog,
        relevant_total=prepared.relevant_total,
        catalog_truncated=prepared.ranking.truncated,
        evidence_mode=prepared.evidence_mode,
        params={
            "min_relevance": prepared.ranking.policy.admission.floor,
            "relative_margin": prepared.ranking.policy.admission.relative_margin,
            "cue": prepared.cue,
            "policy": policy_values,
            **({} if prepared.max_tokens is None else {"max_tokens": prepared.max_tokens}),
        },
        embedder=get_embedder().name,
        created_at=now,
    )
    reply = retrieval_page(retrieval=retrieval, index=0, now=now, fresh=True)
    reply["lexical_only"] = prepared.ranking.lexical_only
    return retrieval, reply


def retrieval_page(
    *, retrieval: Retrieval, index: int, now: datetime, fresh: bool = False
) -> dict[str, Any]:
    """Page `index` of a frozen catalog; records exposures once (replays add none).

    `fresh`: the retrieval was created in this transaction, so it has no exposures or
    cursors yet."""
    pages = retrieval.catalog["pages"]
    page = pages[index]
    memory_refs = [ids.memory_pk(m["ref"]) for m in page["memories"]]
    gone_memories = storage_engine().memories_in_status(
        [r for r in memory_refs if r is not None], Memory.Status.FORGOTTEN
    )
    procedure_refs = [p["ref"] for p in page["procedures"]]
    gone_procedures = (
        set(
            Procedure.objects.filter(
                pk__in=procedure_refs, status=Procedure.Status.FORGOTTEN
            ).values_list("pk", flat=True)
        )
        if procedure_refs
        else set()
    )
    memories = [m for m in page["memories"] if ids.memory_pk(m["ref"]) not in gone_memories]
    procedures = [p for p in page["procedures"] if p["ref"] not in gone_procedures]
    _expose(retrieval, index, memories, procedures, now, fresh=fresh)
    reply: dict[str, Any] = {
        "retrieval_id": retrieval.id,
        "memories": [m["payload"] for m in memories],
        "procedures": [p["payload"] for p in procedures],
        "more_available": index + 1 < len(pages),
        "accessible_field": accessible_field(pages, index),
    }
    if index + 1 < len(pages):
        following = pages[index + 1]
        cursor_id = ids.cursor_id(
            retrieval.id, following["memory_offset"], following["procedure_offset"]
        )
        fields = {
            "retrieval": retrieval,
            "memory_offset": following["memory_offset"],
            "procedure_offset": following["procedure_offset"],
            "page": index + 1,
        }
        if fresh:
            bulk.create(Cursor, id=cursor_id, **fields)
        else:
            Cursor.objects.get_or_create(id=cursor_id, defaults=fields)
        reply["continue_from"] = cursor_id
    return reply


def _expose(
    retrieval: Retrieval,
    index: int,
    memories: list,
    procedures: list,
    now: datetime,
    *,
    fresh: bool,
) -> None:
    existing = (
        set()
        if fresh
        else set(
            Exposure.objects.filter(retrieval=retrieval).values_list("target_kind", "target_id")
        )
    )
    base = sum(
        len(p["memories"]) + len(p["procedures"]) for p in retrieval.catalog["pages"][:index]
    )
    exposures = []
    for rank_at, item in enumerate([*memories, *procedures], start=base + 1):
        # Imported turns are shown, not exposed: no feedback is owed for them.
        if item["kind"] == "episode" or (item["kind"], item["ref"]) in existing:
            continue
        exposures.append(
            Exposure(
                retrieval=retrieval,
                target_kind=item["kind"],
                target_id=item["ref"],
                pathway=item["pathway"],
                currency=item["currency"],
                rank=rank_at,
                page=index,
                scores=item["scores"],
                exposed_at=now,
            )
        )
    bulk.insert(exposures)
