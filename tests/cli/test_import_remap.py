"""`slowave import FILE --format export --remap` (spec §9): colliding integer ids renumbered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import SCOPE
from tests.cli.runner import run_python, slowave

OTHER = "project:other"
# Store A: the CLI seed plus a memory superseded by a newer one (through feedback).
SUPERSEDE = """
import json
from django.utils import timezone
from memory.schemas import ActivateIn, FeedbackIn, RememberIn
from memory.services.activate import session_activate
from memory.services.feedback import feedback_submit
from memory.services.remember import memory_remember
from tests.cli.seeding import CLIENT, _commit, seed

seeded = seed(SCOPE)
old = seeded["ids"][2]
now = timezone.now()
shown = session_activate(
    data=ActivateIn(
        task="Invoices are generated on the first day of each month?",
        initial_goal="billing",
        scope=SCOPE,
    ),
    client=CLIENT,
    now=now,
)
assert old in [m["memory_id"] for m in shown["memories"]], shown
stored = memory_remember(
    data=RememberIn(
        scope=SCOPE,
        session_id=shown["session_id"],
        memories=[{"content": NEW, "type": "fact"}],
    ),
    now=now,
)
new = stored["results"][0]["data"]["memory_id"]
feedback_submit(
    data=FeedbackIn(
        retrieval_id=shown["retrieval_id"],
        memory_feedback=[
            {
                "memory_id": old,
                "assessment": "stale",
                "stale_reason": "superseded",
                "replacement_memory_id": new,
                "reason": "billing moved to month end",
            }
        ],
        coverage="complete",
    ),
    now=timezone.now(),
)
_commit(shown["session_id"])
print(json.dumps({**seeded, "superseded": old, "replacement": new}))
"""
NEW = "Invoices are generated on the last working day of each month."
# In store B: can an agent find the replacement by what it says (FTS, vectors, activate)?
FIND = """
import json
from django.utils import timezone
from memory import embeddings, lexical
from memory.schemas import ActivateIn
from memory.services.activate import session_activate
from memory.vectors import get_index
from tests.cli.seeding import CLIENT

pk = int(REF.removeprefix("sch_"))
lexical_hits = [i for i, _ in lexical.search("memory", NEW, [SCOPE], 10)]
vector = embeddings.encode([NEW])[0]
vector_hits = [i for i, *_ in get_index().knn("memory", vector, 10, [SCOPE])]
found = session_activate(
    data=ActivateIn(task=NEW + "?", initial_goal="billing", scope=SCOPE),
    client=CLIENT,
    now=timezone.now(),
)
shown = {m["memory_id"]: m.get("content") for m in found["memories"]}
print(json.dumps({"lexical": pk in lexical_hits, "vector": pk in vector_hits, "shown": shown}))
"""


def _py(home: Path, code: str, **names: str) -> Any:
    prelude = "".join(f"{k} = {v!r}\n" for k, v in names.items())
    return json.loads(run_python(home, prelude + code).strip().splitlines()[-1])


def _export(home: Path, scope: str, path: Path) -> list[dict[str, Any]]:
    result = slowave(home, "export", "--scope", scope, "--out", str(path))
    assert result.code == 0, result.err
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


@pytest.fixture(scope="module")
def exported(home: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    seeded = _py(home, SUPERSEDE, SCOPE=SCOPE, NEW=NEW)
    path = tmp_path_factory.mktemp("remap") / "a.jsonl"
    return {"seeded": seeded, "path": path, "records": _export(home, SCOPE, path)}


@pytest.fixture(scope="module")
def store_b(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Another store whose own ids (sch_1…, evt_1…, ep_1…) collide with store A's."""
    path = tmp_path_factory.mktemp("store-b")
    assert slowave(path, "migrate", "-v", "0").code == 0
    run_python(path, f"from tests.cli.seeding import seed; seed({OTHER!r})")
    return path


def test_it_lists_collisions_and_imports_nothing_without_remap(
    exported: dict[str, Any], store_b: Path, tmp_path: Path
) -> None:
    before = _export(store_b, OTHER, tmp_path / "before.jsonl")
    refused = slowave(store_b, "import", str(exported["path"]), "--format", "export")
    assert refused.code == 1 and "already in use" in refused.err, refused.err
    assert "evt_1," in refused.err and "--remap" in refused.err
    stats = slowave(store_b, "--json", "stats", "--scope", SCOPE).json()["data"]
    assert stats["sessions"] == 0
    assert _export(store_b, OTHER, tmp_path / "after.jsonl") == before
    transcript = slowave(store_b, "import", str(exported["path"]), "--scope", SCOPE, "--remap")
    assert transcript.code == 2 and "--format export only" in transcript.err


def test_it_renumbers_colliding_ids_and_rewrites_references(
    exported: dict[str, Any], store_b: Path, tmp_path: Path
) -> None:
    before = _export(store_b, OTHER, tmp_path / "before.jsonl")
    loaded = slowave(
        store_b, "--json", "import", str(exported["path"]), "--format", "export", "--remap"
    )
    assert loaded.code == 0, loaded.err
    report = loaded.json()["data"]
    seeded = exported["seeded"]
    ids = report["memory_ids"]
    assert set(seeded["ids"]) <= set(ids) and report["remapped"]["Event"] > 0
    assert report["imported"]["Memory"] == len(seeded["ids"]) + 1
    assert _export(store_b, OTHER, tmp_path / "after.jsonl") == before  # B's rows untouched

    records = _export(store_b, SCOPE, tmp_path / "b.jsonl")
    memories = {f"sch_{r['id']}": r for r in records if r["record"] == "memory"}
    originals = {f"sch_{r['id']}": r for r in exported["records"] if r["record"] == "memory"}
    for old, row in originals.items():
        new = ids.get(old, old)
        assert memories[new]["content"] == row["content"]
        assert memories[new]["status"] == row["status"]
        assert all(s["memory_id"] == int(new[4:]) for s in memories[new]["supports"])
    stale = memories[ids[seeded["superseded"]]]
    replacement = ids.get(seeded["replacement"], seeded["replacement"])
    assert stale["status"] == "stale" and f"sch_{stale['superseded_by_id']}" == replacement
    assert memories[replacement]["content"] == NEW

    events = {e["id"] for r in records if r["record"] == "session" for e in r["events"]}
    for row in memories.values():
        assert row["source_event_id"] in events
    for r in records:
        if r["record"] == "episode":
            assert r["first_event_id"] in events and set(r["event_ids"]) <= events
    feedback = [r for r in records if r["record"] == "feedback" and r["target_kind"] == "memory"]
    assert feedback and all(r["target_id"] in memories for r in feedback)
    assert [r["replacement_memory_id"] for r in feedback if r["replacement_memory_id"]] == [
        replacement
    ]
    learning = [r for r in records if r["record"] == "learning"]
    assert learning and all(r["target_id"] in memories for r in learning)
    for r in records:
        if r["record"] == "retrieval":
            assert all(
                x["target_id"] in memories for x in r["exposures"] if x["target_kind"] == "memory"
            )
            refs = [m["ref"] for p in r["catalog"]["pages"] for m in p["memories"]]
            assert set(refs) <= set(memories)
    forgotten = [r for r in records if r["record"] == "forget_log"]
    assert [f"sch_{r['memory_id']}" for r in forgotten] == [ids[seeded["forgotten"]]]

    found = _py(store_b, FIND, SCOPE=SCOPE, NEW=NEW, REF=replacement)
    assert found["lexical"] and found["vector"], found
    assert found["shown"].get(replacement) == NEW, found
    shown = slowave(store_b, "--json", "show", replacement).json()["data"]
    assert json.dumps(shown).count(NEW) >= 1

    again = slowave(store_b, "import", str(exported["path"]), "--format", "export", "--remap")
    assert again.code == 1 and "already in this store" in again.err, again.err


def test_it_keeps_ids_when_nothing_collides(exported: dict[str, Any], tmp_path: Path) -> None:
    empty = tmp_path / "empty-home"
    empty.mkdir()
    assert slowave(empty, "migrate", "-v", "0").code == 0
    path = exported["path"]
    loaded = slowave(empty, "--json", "import", str(path), "--format", "export", "--remap")
    assert loaded.code == 0, loaded.err
    assert loaded.json()["data"]["remapped"] == {}
    assert _export(empty, SCOPE, tmp_path / "again.jsonl") == exported["records"]


REWRITE = """
import json
from memory.models import Association, Episode, Event, Memory, Prototype
from memory.services.export_remap import _rewrite

plan = {Memory: {3: 40}, Event: {7: 70}, Episode: {2: 20}}
assoc = Association(id=1, src_id=3, dst_id=9, kind="semantic", weight=0.5)
episode = Episode(id=2, first_event_id=7, event_ids=[7, 8], session_id="sess_x")
proto = Prototype(id=1, medoid_episode_id=2, memory_id=3)
memory = Memory(id=9, superseded_by_id=3, provenance={"from": ["sch_3", "sch_31", "evt_7"]})
for row in (assoc, episode, proto, memory):
    _rewrite(row, plan)
print(json.dumps([
    [assoc.src_id, assoc.dst_id],
    [episode.pk, episode.first_event_id, episode.event_ids],
    [proto.medoid_episode_id, proto.memory_id],
    [memory.pk, memory.superseded_by_id, memory.provenance],
]))
"""


def test_it_rewrites_association_order_prototypes_and_json_refs(store_b: Path) -> None:
    assert _py(store_b, REWRITE) == [
        [9, 40],
        [20, 70, [70, 8]],
        [20, 40],
        [9, 40, {"from": ["sch_40", "sch_31", "evt_70"]}],
    ]
