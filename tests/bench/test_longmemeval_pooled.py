"""The pooled LongMemEval bench: every haystack's sessions once, in one scope, every question asked
of the pool, beside the turn baselines and BM25 over whole sessions. Hash embedder: these test
the runner's mechanics, not retrieval quality."""

from __future__ import annotations

import copy
import json
import sqlite3
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command

from slowave_site.bench.longmemeval import run_longmemeval
from slowave_site.bench.longmemeval_data import load_longmemeval
from slowave_site.bench.longmemeval_pooled import SCOPE, SESSION_BASELINE, pooled_sessions
from slowave_site.bench.store import MANIFEST, STORE_DB
from tests.bench.lme_tiny import MARATHONS, PUPPY, lme_payload, write_lme


def _shared_session_payload() -> list[dict]:
    """The tiny file plus a second question whose haystack repeats two sessions by id."""
    garden = copy.deepcopy(MARATHONS)
    garden.update(
        question_id="q-garden",
        question_type="single-session-user",
        question="What did I want to plant in the vegetable garden?",
        answer_session_ids=["m-garden"],
    )
    garden["haystack_sessions"][2] = [
        {
            "role": "user",
            "content": "Help me plan a vegetable garden for the spring season.",
            "has_answer": True,
        }
    ]
    puppy_again = copy.deepcopy(PUPPY)
    puppy_again.update(question_id="q-puppy-2", question="What is my corgi called?")
    return [*lme_payload(), garden, puppy_again]


@pytest.fixture
def pooled_file(tmp_path: Path) -> Path:
    return write_lme(tmp_path, _shared_session_payload())


def _encode(texts: list[str]) -> np.ndarray:
    from memory.embeddings import HashEmbedder

    return np.asarray(HashEmbedder().encode(texts), dtype=np.float32)


def test_it_pools_every_session_once_by_date(pooled_file: Path):
    sessions = pooled_sessions(load_longmemeval(pooled_file))
    ids = [s.session_id for s in sessions]
    assert len(ids) == len(set(ids)) == 9  # 3 + 3 + 1 + 2 distinct, the repeats once
    assert [s.occurred_at for s in sessions] == sorted(s.occurred_at for s in sessions)


def test_it_remembers_the_pool_in_one_scope_and_asks_every_question_of_it(
    pooled_file: Path, tmp_path: Path, hash_embedder: None, django_db_blocker
):
    store = tmp_path / "store"
    with django_db_blocker.unblock():
        report = run_longmemeval(
            str(pooled_file),
            pooled=True,
            store=str(store),
            baselines=["bm25", "rrf"],
            encode=_encode,
            details=True,
        )
        again = run_longmemeval(str(pooled_file), pooled=True, store=str(store), details=True)
    config = report["config"]
    assert config["pooled"] is True and config["sessions"] == 9
    assert config["n_questions"] == 4  # the abstention and assistant-only questions skipped
    with sqlite3.connect(store / STORE_DB) as db:
        scopes = {row[0] for row in db.execute("SELECT DISTINCT scope FROM memory_memory")}
        recorded = db.execute("SELECT COUNT(*) FROM memory_session").fetchone()[0]
    assert scopes == {SCOPE}
    assert recorded == 9  # every pooled session with a user turn, once (a-lisbon's too)
    manifest = json.loads((store / MANIFEST).read_text())
    assert manifest["bench"] == "longmemeval-pooled" and manifest["items"] == ["pooled"]
    assert again["config"]["slowave"]["ingest_reused"] is True
    rows = {r["question_id"]: r for r in report["questions"]["slowave"]}
    # Asked of the pool: items come from other questions' haystacks too.
    own = {q["question_id"]: set(q["haystack_session_ids"]) for q in _shared_session_payload()}
    strangers = {
        t.partition("#")[0]
        for r in rows.values()
        for i in r["items"]
        for t in i["turns"]
        if t.partition("#")[0] not in own[r["question_id"]]
    }
    assert strangers
    assert list(report["methods"]) == ["slowave", "bm25", "rrf", SESSION_BASELINE]


def test_the_session_baseline_ranks_whole_sessions_and_reports_no_turn_figures(
    pooled_file: Path,
):
    report = run_longmemeval(
        str(pooled_file), pooled=True, slowave=False, baselines=["bm25"], details=True
    )
    assert list(report["methods"]) == ["bm25", SESSION_BASELINE]
    summary = report["methods"][SESSION_BASELINE]["overall"]
    assert summary["turn_recall_all@10"] is None and summary["session_recall_all@5"] == 1.0
    rows = {r["question_id"]: r for r in report["questions"][SESSION_BASELINE]}
    first = rows["q-marathons"]["items"][0]
    # One item per session, standing for all its user turns.
    assert first["ref"] in {"m-boston", "m-chicago"} and first["turns"][0].startswith("m-")
    out = StringIO()
    call_command(
        "bench",
        "longmemeval",
        str(pooled_file),
        "--pooled",
        "--no-slowave",
        "--baseline",
        "bm25",
        stdout=out,
    )
    assert f"LongMemEval — {SESSION_BASELINE}" in out.getvalue()
