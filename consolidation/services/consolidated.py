"""Pass 4, consolidate_schemas (spec §8.3): turn recurring prototypes into memories.

A prototype with >= 3 members from >= 2 sessions and no memory is matched against the scope's
memories: an active (or stale) one with the same text or cosine >= 0.92 gains
`consolidated_member` Supports; if the nearest match is forgotten the prototype is tied to it
and skipped for good (a person's forget is never undone by consolidation); otherwise a new
Memory (origin consolidated, type fact, salience 1.0) is made from the medoid episode's text.
Clusters of outcome episodes (the same "Outcome: success: …" line recurring) are skipped.
"""

from __future__ import annotations

import re
from datetime import datetime

from django.db import transaction
from django.db.models import Exists, OuterRef

from consolidation.services.common import chunks, scoped
from memory import embeddings, passages
from memory.indexing import index_memory
from memory.models import Episode, Event, Memory, MemoryType, Prototype, Support
from memory.text import normalized_hash
from memory.vectors import get_index

MIN_MEMBERS = 3
MIN_SESSIONS = 2
MATCH_COSINE = 0.92
CONTENT_LIMIT = 1_000
INITIAL_SALIENCE = 1.0
MATCH_K = 10
LINKABLE = (Memory.Status.ACTIVE, Memory.Status.STALE)
SENTENCE_END = re.compile(r"[.!?](?=\s)|\n")


def clip_at_sentence(text: str, limit: int = CONTENT_LIMIT) -> str:
    """The text, or its longest prefix within `limit` that ends a sentence (else a word)."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = text[: limit + 1]
    ends = [m.end() for m in SENTENCE_END.finditer(head) if m.end() <= limit]
    if ends:
        return head[: ends[-1]].strip()
    cut = head.rfind(" ", 0, limit)
    return head[: cut if cut > 0 else limit].strip()


def schemas_consolidate(
    *, now: datetime, scope: str | None = None, since: datetime | None = None
) -> dict[str, int]:
    ready = Prototype.objects.filter(
        memory__isnull=True,
        support_count__gte=MIN_MEMBERS,
        session_count__gte=MIN_SESSIONS,
        medoid_episode__isnull=False,
    )
    ready = scoped(ready, scope)
    counts = {"created": 0, "linked": 0, "skipped_forgotten": 0, "skipped_outcome": 0}
    for prototype in ready.select_related("medoid_episode__first_event").order_by("pk"):
        medoid = prototype.medoid_episode
        assert medoid is not None  # filtered on medoid_episode__isnull=False
        if medoid.first_event.kind == Event.Kind.OUTCOME:
            # Sessions that end the same way ("success: tests pass") are not knowledge;
            # what they teach is kept as procedures.
            counts["skipped_outcome"] += 1
            continue
        outcome = _consolidate(prototype, now)
        if outcome:
            counts[outcome] += 1
    counts["members_linked"] = _link_new_members(scope, now)
    return counts


def _nearest_match(prototype: Prototype, text: str) -> Memory | None:
    """Same normalised text first, then the nearest memory by cosine to the centroid (>= 0.92)."""
    same_text = Memory.objects.filter(scope=prototype.scope, normalized_hash=normalized_hash(text))
    for status in (Memory.Status.ACTIVE, Memory.Status.STALE, Memory.Status.FORGOTTEN):
        found = same_text.filter(status=status).order_by("pk").first()
        if found is not None:
            return found
    hits = [
        (pk, cos)
        for pk, cos in get_index().knn(
            "memory", embeddings.known_vector(prototype.centroid), MATCH_K, [prototype.scope]
        )
        if cos >= MATCH_COSINE
    ]
    rows = Memory.objects.in_bulk([pk for pk, _ in hits])
    for pk, _ in hits:  # best first; archived duplicates defer to the copy they point at
        memory = rows.get(pk)
        if memory is not None and memory.status != Memory.Status.ARCHIVED:
            return memory
    return None


def _consolidate(prototype: Prototype, now: datetime) -> str | None:
    medoid = prototype.medoid_episode
    assert medoid is not None  # only prototypes with a medoid are consolidated
    text = clip_at_sentence(medoid.content)
    match = _nearest_match(prototype, text)
    vector = None
    if match is None:  # encode outside the transaction: the model may take seconds to load
        vector = _vector_for(medoid, text)
    with transaction.atomic():
        if not Prototype.objects.filter(pk=prototype.pk, memory__isnull=True).exists():
            return None
        # Matched again under the write lock: an agent may have remembered this very text since.
        match = match or _nearest_match(prototype, text)
        if match is not None and match.status == Memory.Status.FORGOTTEN:
            Prototype.objects.filter(pk=prototype.pk).update(memory=match, updated_at=now)
            return "skipped_forgotten"
        memory = match or _create(prototype, medoid, text, vector, now)
        Prototype.objects.filter(pk=prototype.pk).update(memory=memory, updated_at=now)
        Memory.objects.filter(pk=memory.pk, prototype__isnull=True).update(prototype=prototype)
        _support_members(memory, Episode.objects.filter(prototype=prototype), now)
    return "linked" if match is not None else "created"


def _vector_for(medoid: Episode, text: str) -> passages.Embedded | None:
    # The medoid's own embedding is the embedding of this very text when nothing was clipped.
    if text == medoid.content.strip() and medoid.embedding is not None:
        embedded = passages.encode_known([text], [embeddings.known_vector(medoid.embedding)])
    else:
        embedded = passages.encode([text])
    return None if embedded is None else embedded[0]


def _create(
    prototype: Prototype,
    medoid: Episode,
    text: str,
    vector: passages.Embedded | None,
    now: datetime,
) -> Memory:
    memory = Memory.objects.create(
        type=MemoryType.FACT,
        content=text,
        normalized_hash=normalized_hash(text),
        scope=prototype.scope,
        scope_kind=prototype.scope.partition(":")[0],
        origin=Memory.Origin.CONSOLIDATED,
        salience=INITIAL_SALIENCE,
        prototype=prototype,
        source_session_id=medoid.session_id,
        source_event_id=medoid.first_event_id,
        occurred_at=medoid.occurred_at,
        created_at=now,
        embedding=None if vector is None else embeddings.to_blob(vector.vector),
        passages=None if vector is None else passages.to_blob(vector.passages),
        embedded_at=None if vector is None else now,
        provenance={"prototype_id": prototype.public_id, "medoid_episode_id": medoid.public_id},
    )
    index_memory(memory=memory, embedded=vector)
    return memory


def _support_members(memory: Memory, members, now: datetime) -> int:
    """One consolidated_member Support per member episode, naming its first event and session."""
    linked = set(
        Support.objects.filter(memory=memory, kind=Support.Kind.CONSOLIDATED_MEMBER).values_list(
            "episode_id", flat=True
        )
    )
    fresh = [
        Support(
            memory=memory,
            kind=Support.Kind.CONSOLIDATED_MEMBER,
            episode_id=e.pk,
            event_id=e.first_event_id,
            session_id=e.session_id,
            scope=e.scope,
            created_at=now,
        )
        for e in members.order_by("pk")
        if e.pk not in linked
    ]
    Support.objects.bulk_create(fresh)
    return len(fresh)


def _link_new_members(scope: str | None, now: datetime) -> int:
    """Episodes that joined an already consolidated prototype become evidence for its memory."""
    supported = Support.objects.filter(
        memory_id=OuterRef("prototype__memory_id"),
        episode_id=OuterRef("pk"),
        kind=Support.Kind.CONSOLIDATED_MEMBER,
    )
    unlinked = Episode.objects.filter(prototype__memory__status__in=LINKABLE).exclude(
        Exists(supported)
    )
    unlinked = scoped(unlinked, scope)
    by_memory: dict[int, list[int]] = {}
    for pk, memory_id in unlinked.order_by("pk").values_list("pk", "prototype__memory_id"):
        by_memory.setdefault(memory_id, []).append(pk)
    added = 0
    for memory_id, episode_ids in sorted(by_memory.items()):
        for chunk in chunks(episode_ids):
            with transaction.atomic():
                added += _support_members(
                    Memory(pk=memory_id), Episode.objects.filter(pk__in=chunk), now
                )
    return added
