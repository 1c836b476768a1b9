"""`slowave bench memorycode`: MemoryCode's gold and figures on a small written file (hash
embedder: the runner's mechanics only; retrieval quality is measured on the real data)."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from slowave_site.bench import memorycode_metrics as mc
from slowave_site.bench.memorycode import run_memorycode

CONVERSATION: dict[str, Any] = {
    "speaker_a": "Mentor",
    "speaker_b": "Colleague",
    "session_1_date_time": "9:00 am on 2 March, 2024",
    "session_1": [
        {"speaker": "Mentor", "dia_id": "D1:1", "text": "Always start function names with 'x_'."},
        {"speaker": "Colleague", "dia_id": "D1:2", "text": "Understood, 'x_' it is."},
    ],
    "session_2_date_time": "10:30 am on 5 March, 2024",
    "session_2": [
        {"speaker": "Mentor", "dia_id": "D2:1", "text": "We use GitLab for version control."},
        {"speaker": "Colleague", "dia_id": "D2:2", "text": "Great, I like its merge requests."},
    ],
    "session_3_date_time": "4:15 pm on 8 March, 2024",
    "session_3": [
        {"speaker": "Mentor", "dia_id": "D3:1", "text": "Function names now start with 'gn_'."},
        {"speaker": "Colleague", "dia_id": "D3:2", "text": "Noted, I will rename them."},
    ],
}
QA: list[dict[str, Any]] = [
    {
        "question": "What prefix should function names start with?",
        "answer": "always start function names with 'gn_'",
        "evidence": ["D3:1"],
        "evidence_sessions": [3],
        "superseded": ["D1:1"],
        "superseded_sessions": [1],
        "category": 41,
        "kind": "code",
    },
    {
        "question": "Which version control system do we use?",
        "answer": "use GitLab",
        "evidence": [],
        "evidence_sessions": [2],
        "superseded": [],
        "superseded_sessions": [],
        "category": 44,
        "kind": "workplace",
    },
]


@pytest.fixture
def memorycode_file(tmp_path: Path) -> Path:
    path = tmp_path / "memorycode-tiny.json"
    payload = [{"sample_id": "mc-1", "conversation": CONVERSATION, "qa": QA}]
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


def _gold(**changes: Any) -> mc.Gold:
    base: dict[str, Any] = dict(
        category=41,
        kind="code",
        evidence=("D3:1",),
        sessions=frozenset({3}),
        superseded=("D1:1",),
        superseded_sessions=frozenset({1}),
    )
    return mc.Gold(**{**base, **changes})


def test_it_counts_an_older_version_ranked_above_the_current_one():
    older_first = mc.question_figures([["D1:1"], ["D2:1"], ["D3:1"]], _gold())
    assert older_first["cur@1"] == 0.0 and older_first["cur@5"] == 1.0
    assert older_first["sup_above@10"] == 1.0 and older_first["sess_all@5"] == 1.0
    current_first = mc.question_figures([["D3:1"], ["D1:1"]], _gold())
    assert current_first["cur@1"] == 1.0 and current_first["sup_above@10"] == 0.0
    # An item behind both turns (a consolidated episode) states the current version.
    merged = mc.question_figures([["D1:1", "D3:1"]], _gold())
    assert merged["sup_above@20"] == 0.0
    # Without the current version anywhere, an older one in the first k is above it.
    missing = mc.question_figures([["D2:1"]] * 12 + [["D1:1"]], _gold())
    assert missing["sup_above@10"] == 0.0 and missing["sup_above@20"] == 1.0


def test_it_scores_workplace_questions_by_session():
    gold = _gold(category=45, kind="workplace", evidence=(), superseded=())
    figures = mc.question_figures([["D1:2"], ["D3:2"]], gold)
    assert figures["cur@1"] == 0.0 and figures["cur@5"] == 1.0
    assert figures["sup_above@10"] == 1.0
    never_updated = mc.question_figures([["D3:2"]], _gold(category=40))
    assert "sup_above@10" not in never_updated


def test_it_splits_dialogues_into_halves_by_a_hash_of_their_id():
    halves = {mc.half_of(f"mc-{n}") for n in range(20)}
    assert halves == set(mc.HALVES)
    assert mc.half_of("mc-7") == mc.half_of("mc-7")


def test_it_runs_slowave_beside_baselines_on_a_kept_store(
    memorycode_file: Path, tmp_path: Path, hash_embedder: None, django_db_blocker
):
    store = tmp_path / "mc-store"
    with django_db_blocker.unblock():
        first = run_memorycode(str(memorycode_file), baselines=["bm25"], store=str(store))
        again = run_memorycode(
            str(memorycode_file),
            store=str(store),
            policy=["terms.coverage_weight=0"],
            details=True,
        )
    assert list(first["methods"]) == ["slowave", "bm25"]
    for summary in first["methods"].values():
        assert summary["overall"]["n"] == 2 and summary["updated"]["n_updated"] == 1
        assert set(summary["categories"]) == {"41", "44"}
        assert summary["overall"]["cur@10"] == 1.0  # three short sessions: everything is found
    assert first["config"]["ingest_reused"] is False and again["config"]["ingest_reused"] is True
    assert again["config"]["policy"]["overrides"] == ["terms.coverage_weight=0"]
    assert json.loads((store / "manifest.json").read_text())["bench"] == "memorycode"
    rows = again["questions"]["slowave"]
    assert [r["key"] for r in rows] == ["mc-1#0", "mc-1#1"] and rows[0]["items"]


def test_the_command_prints_the_tables_and_refuses_an_unknown_half(
    memorycode_file: Path, hash_embedder: None, django_db_blocker
):
    out = StringIO()
    with django_db_blocker.unblock():
        call_command(
            "bench", "memorycode", str(memorycode_file), "--no-slowave", "--baseline", "bm25",
            stdout=out,
        )  # fmt: skip
    assert "MemoryCode — bm25" in out.getvalue() and "overall" in out.getvalue()
    with pytest.raises(ValueError, match="half must be one of"):
        run_memorycode(str(memorycode_file), half="other", baselines=["bm25"], slowave=False)
