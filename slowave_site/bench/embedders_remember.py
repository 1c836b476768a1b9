"""LoCoMo-like turns remembered through the real remember path, in a fresh scratch store: the
`remember_turns_per_second` of `slowave bench scale --embedders` (slowave_site.bench.embedders).

Turns of two or three sentences (~130 characters, LoCoMo's mean), remembered in sessions of
20 (LoCoMo's sessions hold ~27): each session one activate and one batch remember, as the
LoCoMo bench ingests them. Only the remember calls are timed: they embed each turn's whole
text and its leading passages (memory.passages) and store the rows, and are what an agent's
ingest waits for. The store records the embedder (memory.embedder_record) as any store does.
"""

from __future__ import annotations

import os
import tempfile
import time
from typing import Any

SETTING = {"onnx-fp32": "onnx", "onnx-int8": "onnx-int8", "torch": "sentence-transformers"}
SESSION_TURNS = 20
# The short-turn batch's speakers and topics (embedders.py), spelled again here: that module
# runs this one, so this one does not import it.
SPEAKERS = ("Caroline", "Melanie", "Jon", "Gina")
TOPICS = (
    "went to the support group yesterday and it was really powerful to hear everyone",
    "am planning a camping trip with the kids to the lake next month, weather permitting",
    "started a pottery class and made a bowl with a blue glaze that came out really well",
    "lost my job at the bank but it gave me time to start the dance studio",
)
AFTERWARDS = (
    "It took longer than we planned.",
    "I would love to do it again soon!",
    "Honestly it made my whole week.",
)


def turns(count: int = 240) -> list[str]:
    """Deterministic LoCoMo-like turns: a label, then two or three sentences."""
    out = []
    for i in range(count):
        speaker, topic = SPEAKERS[i % len(SPEAKERS)], TOPICS[(i // 4) % len(TOPICS)]
        extra = " ".join(AFTERWARDS[: 1 + i % 2 + (i % 5 == 0)])
        out.append(f"{speaker}: I {topic} (day {i}). {extra}")
    return out


def remember_rate(mode: str) -> dict[str, Any]:
    """Turns per second through memory_remember with `mode`'s embedder (Django set up here,
    on a scratch SQLite file of this process's own)."""
    os.environ["SLOWAVE_EMBEDDER"] = SETTING[mode]
    os.environ["SLOWAVE_DB_PATH"] = os.path.join(
        tempfile.mkdtemp(prefix="slowave-bench-remember-"), "bench.sqlite3"
    )
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "slowave_site.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return _timed_sessions(turns())


def _timed_sessions(texts: list[str]) -> dict[str, Any]:
    from django.utils import timezone

    from memory import embeddings
    from memory.schemas import ActivateIn, RememberIn, RememberItem
    from memory.services.activate import session_activate
    from memory.services.remember import memory_remember
    from slowave_site.bench.scale_ask import CLIENT

    embeddings.encode(["warm up"])  # the model's load is the load column's, not this one's
    seconds = 0.0
    for start in range(0, len(texts), SESSION_TURNS):
        opened = session_activate(
            data=ActivateIn(task=f"session {start}", initial_goal="record", scope="project:b"),
            client=CLIENT,
            now=timezone.now(),
        )
        items = [RememberItem(content=t, type="fact") for t in texts[start : start + SESSION_TURNS]]
        began = time.perf_counter()
        memory_remember(
            data=RememberIn(scope="project:b", session_id=opened["session_id"], memories=items),
            now=timezone.now(),
        )
        seconds += time.perf_counter() - began
    return {
        "remember_turns_per_second": round(len(texts) / seconds, 1),
        "remember_turn_chars_mean": round(sum(map(len, texts)) / len(texts)),
    }
