"""Episode formation from a session's events (spec §8.1), claimed pending → forming → formed."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
from django.db import transaction

from memory import embeddings
from memory.engines import bulk
from memory.indexing import index_episodes
from memory.models import Episode, Event, Memory, Session, Support

MESSAGE_KINDS: dict[str, str] = {
    Event.Kind.USER_MESSAGE: "User",
    Event.Kind.ASSISTANT_MESSAGE: "Assistant",
    Event.Kind.SYSTEM_MESSAGE: "System",
    Event.Kind.TOOL_MESSAGE: "Tool",
    Event.Kind.TRAJECTORY_ACTION: "Action",
    Event.Kind.TRAJECTORY_OBSERVATION: "Observation",
}
ALONE_KINDS = {Event.Kind.REMEMBER, Event.Kind.OUTCOME}
WINDOW = 2
GAP = timedelta(minutes=30)


def _line(event: Event) -> str:
    if event.kind == Event.Kind.REMEMBER:
        return f"Remember ({event.metadata.get('type', 'fact')}): {event.content}"
    if event.kind == Event.Kind.OUTCOME:
        return f"Outcome: {event.content}"
    return f"{MESSAGE_KINDS[event.kind]}: {event.content}"


def _windows(events: list[Event]) -> list[list[Event]]:
    windows: list[list[Event]] = []
    current: list[Event] = []
    for event in events:
        if event.kind in ALONE_KINDS:
            if current:
                windows.append(current)
                current = []
            windows.append([event])
            continue
        if current and (len(current) == WINDOW or _gap(current[-1], event)):
            windows.append(current)
            current = []
        current.append(event)
    if current:
        windows.append(current)
    return windows


def _gap(before: Event, after: Event) -> bool:
    if before.occurred_at is None or after.occurred_at is None:
        return False
    return abs(after.occurred_at - before.occurred_at) > GAP


def episodes_form(*, session_id: str, now: datetime, session: Session | None = None) -> int:
    """Form a session's episodes once; a second call (or a concurrent one) forms nothing.

    `session`: the row when the caller holds it (closing does), so it is not read again."""
    with transaction.atomic():
        claimed = Session.objects.filter(
            pk=session_id, episodes_state=Session.EpisodesState.PENDING
        ).update(episodes_state=Session.EpisodesState.FORMING)
        if claimed != 1:
            return 0
        if session is None:
            session = Session.objects.get(pk=session_id)
        events = list(
            Event.objects.filter(session=session, kind__in=[*MESSAGE_KINDS, *ALONE_KINDS]).order_by(
                "seq"
            )
        )
        windows = _windows(events)
        texts = ["\n".join(_line(e) for e in window) for window in windows]
        vectors = embeddings.encode(texts) if texts else None
        episodes = bulk.insert(
            [
                _episode(session, window, text, vectors, index, now)
                for index, (window, text) in enumerate(zip(windows, texts, strict=True))
            ]
        )
        index_episodes(
            rows=[(e, vectors[i] if vectors is not None else None) for i, e in enumerate(episodes)]
        )
        _supports(session, episodes, now)
        Session.objects.filter(pk=session_id).update(episodes_state=Session.EpisodesState.FORMED)
        return len(windows)


def _episode(
    session: Session,
    window: list[Event],
    text: str,
    vectors: np.ndarray | None,
    index: int,
    now: datetime,
) -> Episode:
    times = [e.occurred_at for e in window if e.occurred_at is not None]
    vector = vectors[index] if vectors is not None else None
    return Episode(
        session=session,
        scope=session.scope,
        content=text,
        first_event=window[0],
        event_ids=[e.pk for e in window],
        recorded_at=now,
        occurred_at=min(times) if times else None,
        embedding=embeddings.to_blob(vector) if vector is not None else None,
        embedded_at=now if vector is not None else None,
    )


def _supports(session: Session, episodes: list[Episode], now: datetime) -> None:
    """Each memory remembered in an episode's events is supported by that episode."""
    episode_of = {event_id: e for e in episodes for event_id in e.event_ids}
    found = Memory.objects.filter(source_event_id__in=list(episode_of)).order_by("pk")
    by_episode: dict[int, list[int]] = {}
    for pk, event_id in found.values_list("pk", "source_event_id"):
        by_episode.setdefault(episode_of[event_id].pk, []).append(pk)
    bulk.insert(
        [
            Support(
                memory_id=memory_pk,
                kind=Support.Kind.SOURCE_EPISODE,
                episode=episode,
                session=session,
                scope=session.scope,
                created_at=now,
            )
            for episode in episodes
            for memory_pk in by_episode.get(episode.pk, [])
        ]
    )
