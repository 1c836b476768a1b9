"""Slowave's side of the LongMemEval bench on real databases: the replayed ingest, kept stores,
policy overrides and the command. Hash embedder where the test is about mechanics; the real
model where retrieval quality is under test."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connections

from memory.models import Memory
from memory.retrieval import policy
from slowave_site.bench.longmemeval import run_longmemeval
from slowave_site.bench.longmemeval_data import load_longmemeval
from slowave_site.bench.longmemeval_slowave import ingest_question
from slowave_site.bench.store import MANIFEST, STORE_DB, StoreMismatch, scratch_database
from tests.bench.lme_tiny import LONG_TURN, write_lme


@pytest.fixture
def lme_file(tmp_path: Path) -> Path:
    return write_lme(tmp_path)


def _sessions_in(store: Path) -> int:
    with sqlite3.connect(store / STORE_DB) as db:
        return db.execute("SELECT COUNT(*) FROM memory_session").fetchone()[0]


def _ranked(report: dict) -> list[list[dict]]:
    return [row["items"] for row in report["questions"]["slowave"]]


def test_it_replays_the_haystack_at_its_dates_turns_as_is(
    lme_file: Path, hash_embedder: None, django_db_blocker
):
    puppy = load_longmemeval(lme_file)[0]
    with django_db_blocker.unblock():
        before = connections["default"].settings_dict["NAME"]
        with scratch_database():
            behind = ingest_question(puppy, consolidate=False)
            rows = {f"sch_{m.pk}": m for m in Memory.objects.filter(scope="project:lme-q-puppy")}
        assert connections["default"].settings_dict["NAME"] == before
    assert set(behind) == set(rows)
    by_key = {}
    for memory_id, keys in behind.items():
        (key,) = keys
        by_key.setdefault(key, []).append(rows[memory_id])
    assert sorted(by_key) == ["s-novel#0", "s-pasta#0", "s-puppy#0", "s-puppy#2"]
    corgi = by_key["s-puppy#0"][0]
    assert corgi.content == "I just brought home my new puppy, a corgi named Biscuit!"
    when = datetime(2023, 5, 20, 2, 21, tzinfo=UTC)
    assert corgi.occurred_at == when and corgi.created_at == when  # the clock was replayed
    novel = by_key["s-novel#0"]  # one turn over 8,000 chars: two memories, one turn key
    assert len(novel) == 2 and " ".join(m.content for m in novel).split() == LONG_TURN.split()


def test_it_keeps_the_store_and_asks_it_again_without_ingesting(
    lme_file: Path, tmp_path: Path, hash_embedder: None, django_db_blocker
):
    store = tmp_path / "store"
    with django_db_blocker.unblock():
        first = run_longmemeval(str(lme_file), store=str(store), details=True)
        recorded = _sessions_in(store)
        again = run_longmemeval(str(lme_file), store=str(store), details=True)
    assert first["config"]["slowave"]["ingest_reused"] is False
    assert again["config"]["slowave"]["ingest_reused"] is True
    assert "ingest_seconds" not in again["config"]["slowave"]
    # Asked on a scratch copy: the kept file holds only the replayed sessions (six with user
    # turns), and a rerun returns exactly what the first run did.
    assert recorded == _sessions_in(store) == 6
    assert _ranked(again) == _ranked(first) and _ranked(first)[0][0]["turns"] == ["s-puppy#0"]
    manifest = json.loads((store / MANIFEST).read_text())
    assert manifest["bench"] == "longmemeval" and manifest["items"] == ["q-puppy", "q-marathons"]
    assert manifest["options"]["roles"] == "user" and manifest["options"]["consolidation"] is True
    assert manifest["options"]["embedder"] == "hash-384"
    turns = {k for mapping in manifest["mapping"]["q-puppy"].values() for k in mapping}
    assert turns == {"s-novel#0", "s-pasta#0", "s-puppy#0", "s-puppy#2"}
    with django_db_blocker.unblock():  # a subset of the kept questions is served too
        subset = run_longmemeval(str(lme_file), store=str(store), questions=["q-marathons"])
    assert subset["config"]["slowave"]["ingest_reused"] is True


def test_it_refuses_a_store_that_does_not_match_unless_rebuilt(
    lme_file: Path, tmp_path: Path, hash_embedder: None, django_db_blocker
):
    store = tmp_path / "store"
    with django_db_blocker.unblock():
        run_longmemeval(str(lme_file), store=str(store), limit=1, consolidate=False)
        with pytest.raises(StoreMismatch, match=r"roles='user', not 'both'.*--rebuild"):
            run_longmemeval(
                str(lme_file), store=str(store), limit=1, roles="both", consolidate=False
            )
        with pytest.raises(StoreMismatch, match=r"consolidation=False, not True"):
            run_longmemeval(str(lme_file), store=str(store), limit=1)
        with pytest.raises(StoreMismatch, match=r"lacks 1 of the 2 items.*q-marathons"):
            run_longmemeval(str(lme_file), store=str(store), consolidate=False)
        (tmp_path / "other").mkdir()
        other = write_lme(tmp_path / "other")
        other.write_text(other.read_text().replace("corgi", "beagle"))
        with pytest.raises(StoreMismatch, match="another data file"):
            run_longmemeval(str(other), store=str(store), limit=1, consolidate=False)
        rebuilt = run_longmemeval(
            str(lme_file), store=str(store), roles="both", rebuild=True, consolidate=False
        )
    assert rebuilt["config"]["slowave"]["ingest_reused"] is False
    manifest = json.loads((store / MANIFEST).read_text())
    assert manifest["options"]["roles"] == "both" and "q-hotel" in manifest["items"]


def test_it_refuses_a_kept_database_without_a_manifest(
    lme_file: Path, tmp_path: Path, hash_embedder: None, django_db_blocker
):
    store = tmp_path / "store"
    store.mkdir()
    (store / STORE_DB).write_bytes(b"")
    with django_db_blocker.unblock(), pytest.raises(StoreMismatch, match="no manifest"):
        run_longmemeval(str(lme_file), store=str(store), limit=1)


def test_it_ranks_the_questions_under_the_overrides_and_records_them(
    lme_file: Path, hash_embedder: None, django_db_blocker
):
    default = policy.active()
    with django_db_blocker.unblock():
        report = run_longmemeval(
            str(lme_file),
            limit=1,
            consolidate=False,
            policy=["recall.reply_weight=0.25", "floor=0.2"],
        )
    ranked = report["config"]["policy"]
    assert ranked["overrides"] == ["recall.reply_weight=0.25", "floor=0.2"]
    expected = default.with_overrides(["recall.reply_weight=0.25", "floor=0.2"])
    assert ranked["version"] == expected.version != default.version
    assert policy.active() == default  # uninstalled once the questions are asked


def test_it_names_a_bad_override_before_ingesting_anything(
    lme_file: Path, tmp_path: Path, hash_embedder: None
):
    store = tmp_path / "store"
    with pytest.raises(ValueError, match="no policy value 'recall.nope'"):
        run_longmemeval(str(lme_file), store=str(store), policy=["recall.nope=1"])
    assert not store.exists()
    out = StringIO()
    with pytest.raises(CommandError, match="policy override 'floor' must read NAME=VALUE"):
        call_command("bench", "longmemeval", str(lme_file), "--policy", "floor", stdout=out)
    with pytest.raises(CommandError, match="no such file"):
        call_command("bench", "longmemeval", str(tmp_path / "missing.json"), stdout=out)


def test_the_command_prints_the_baselines_table(lme_file: Path):
    out = StringIO()
    call_command(
        "bench", "longmemeval", str(lme_file), "--no-slowave", "--baseline", "bm25", stdout=out
    )
    assert "LongMemEval — bm25" in out.getvalue() and "2 questions" in out.getvalue()


def test_it_finds_the_evidence_turns_first_with_the_real_model(
    tmp_path: Path, fresh_index: None, django_db_blocker
):
    # The long turn's 64 passages would only slow the model down here.
    short = json.loads(write_lme(tmp_path).read_text().replace(LONG_TURN.strip(), "A novel."))
    with django_db_blocker.unblock():
        report = run_longmemeval(str(write_lme(tmp_path, short)), details=True)
    rows = {r["question_id"]: r for r in report["questions"]["slowave"]}
    assert rows["q-puppy"]["items"][0]["turns"] == ["s-puppy#0"]
    marathons = [i["turns"][0] for i in rows["q-marathons"]["items"][:2]]
    assert sorted(marathons) == ["m-boston#0", "m-chicago#0"]
    overall = report["methods"]["slowave"]["overall"]
    assert overall["session_recall_all@5"] == 1.0 and overall["session_ndcg@5"] == 1.0
    assert overall["turn_recall_all@10"] == 1.0
    assert report["config"]["embedder"] == "sentence-transformers/all-MiniLM-L6-v2"


def _question(qid: str, question: str, evidence: str, filler: str | None) -> dict:
    sessions = [[{"role": "user", "content": evidence, "has_answer": True}]]
    ids, dates = [f"{qid}-evidence"], ["2023/05/01 (Mon) 09:00"]
    if filler is not None:  # the same session text recurs in other questions' haystacks
        sessions.append([{"role": "user", "content": filler}])
        ids.append(f"{qid}-filler")
        dates.append("2023/05/02 (Tue) 09:00")
    return {
        "question_id": qid,
        "question_type": "single-session-user",
        "question": question,
        "answer": "-",
        "question_date": "2023/06/01 (Thu) 10:00",
        "haystack_session_ids": ids,
        "haystack_dates": dates,
        "haystack_sessions": sessions,
        "answer_session_ids": [f"{qid}-evidence"],
    }


def test_it_keeps_each_question_to_its_own_haystack(
    tmp_path: Path, hash_embedder: None, django_db_blocker
):
    """Text shared by other questions' haystacks corroborates across their scopes and is
    promoted (spec 7.4); a question whose haystack never held it must still not see it."""
    filler = "Which puppy breed suits a small flat, and which puppy food brands are best?"
    payload = [
        _question("q-puppy", "What breed is my new puppy?", "My new puppy is a corgi.", None),
        _question("q-bike", "What bike did I buy?", "I bought a blue road bike.", filler),
        _question("q-tent", "What tent did I buy?", "I bought a two-person tent.", filler),
        _question("q-oven", "What oven did I buy?", "I bought a steam oven.", filler),
    ]
    path = write_lme(tmp_path, payload)
    with django_db_blocker.unblock():
        report = run_longmemeval(str(path), store=str(tmp_path / "store"), details=True)
    assert report["config"]["slowave"]["isolated_memories"] >= 1  # promotion did happen
    puppy = report["questions"]["slowave"][0]
    assert puppy["question_id"] == "q-puppy"
    assert [item["text"] for item in puppy["items"]] == ["[1 May 2023] My new puppy is a corgi."]
