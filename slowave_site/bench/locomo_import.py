"""LoCoMo ingested as imported history (`slowave bench locomo --ingest import`).

Each session of a conversation is one transcript imported through the history import
(memory.services.transcripts), as a user's exported chats would be, instead of each turn
remembered as a fact: the turns become events and episodes, and whatever consolidation makes
of them. The first speaker is the transcript's user, the second its assistant; each line
carries its turn's date and, in its metadata, the dia_id, so an episode a question shows is
credited with exactly the turns it holds.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from django.utils import timezone

from memory.errors import InvalidInput
from memory.models import Episode, Event
from memory.retrieval.render import episode_ref
from memory.services.transcripts import transcripts_import
from slowave_site.bench.locomo_data import Sample
from slowave_site.bench.slowave import consolidated_turns


def transcript_lines(sample: Sample) -> dict[str, list[str]]:
    """Per session key, the session's JSONL transcript lines."""
    sessions: dict[str, list[str]] = {}
    for session in sample.sessions:
        key = f"{sample.sample_id}-session-{session.index}"
        sessions[key] = [
            json.dumps(
                {
                    "session_key": key,
                    "role": "user" if turn.speaker == sample.speaker_a else "assistant",
                    "content": turn.content,
                    **({"occurred_at": turn.occurred_at.isoformat()} if turn.occurred_at else {}),
                    "metadata": {"dia_id": turn.dia_id},
                }
            )
            for turn in session.turns
        ]
    return sessions


def episodes_behind(scope: str) -> dict[str, list[str]]:
    """Each imported episode's id on a page → the dia_ids of the turns it holds."""
    dia_ids = {
        pk: meta.get("dia_id")
        for pk, meta in Event.objects.filter(session__scope=scope).values_list("pk", "metadata")
        if isinstance(meta, dict)
    }
    return {
        episode_ref(pk): [d for d in (dia_ids.get(e) for e in event_ids or []) if d]
        for pk, event_ids in Episode.objects.filter(scope=scope).values_list("pk", "event_ids")
    }


def import_sample(
    sample: Sample,
    scope: str,
    consolidate: Callable[[str], None] | None = None,
    log: Callable[[str], None] | None = None,
) -> dict[str, list[str]]:
    """Import the conversation session by session (a session the secrets policy refuses is
    left out and said), then (optionally) one consolidation pass; item id → dia_ids."""
    for key, lines in transcript_lines(sample).items():
        try:
            transcripts_import(lines=lines, scope=scope, now=timezone.now())
        except InvalidInput as exc:
            if log is not None:
                log(f"slowave import: {key} refused ({exc.message})")
    behind = episodes_behind(scope)
    if consolidate is not None:
        consolidate(scope)
        behind.update(consolidated_turns(sample, scope))
    return behind
