"""`bench locomo --ingest import`: each session imported as a transcript, asked beside the
remembered ingest in one report (hash embedder: mechanics only)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from slowave_site.bench.locomo import select_samples
from slowave_site.bench.locomo_import import transcript_lines
from slowave_site.bench.locomo_run import run_locomo_bench

TURNS = {"D1:1", "D1:2", "D1:3", "D2:1", "D2:2"}


def test_it_imports_each_session_as_a_transcript_beside_the_remembered_ingest(
    locomo_file: Path, hash_embedder: None, django_db_blocker
):
    with django_db_blocker.unblock():
        # Floor 0: the hash embedder's cosines say nothing; what is tested is the plumbing.
        report = run_locomo_bench(
            str(locomo_file),
            consolidate=False,
            details=True,
            ingest=["remember", "import"],
            policy=["floor=0"],
        )
    assert set(report["methods"]) == {"slowave", "slowave-import"}
    assert report["config"]["ingest"] == ["remember", "import"]
    rows = report["questions"]["slowave-import"]
    items = [i for row in rows for i in row["items"]]
    # Imported turns come back as episodes, each credited with the turns it holds.
    assert any(i["ref"].startswith("ep_") for i in items)
    assert all(i["dia_ids"] and set(i["dia_ids"]) <= TURNS for i in items)
    recall = report["methods"]["slowave-import"]["overall"]["recall@10"]
    assert recall is not None and recall > 0


def test_it_refuses_an_unknown_ingest(locomo_file: Path):
    with pytest.raises(ValueError, match="unknown ingest 'paste'; choose from remember, import"):
        run_locomo_bench(str(locomo_file), ingest=["paste"])


def test_each_session_is_one_transcript_of_user_and_assistant_turns(locomo_file: Path):
    (sample,) = select_samples(str(locomo_file))
    sessions = {
        key: [json.loads(line) for line in lines] for key, lines in transcript_lines(sample).items()
    }
    assert list(sessions) == ["conv-t1-session-1", "conv-t1-session-2"]
    first = sessions["conv-t1-session-1"][0]
    assert first["role"] == "user" and first["content"].startswith("Ann: I adopted")
    assert first["occurred_at"].startswith("2023-05-08") and first["metadata"] == {"dia_id": "D1:1"}
    roles = {line["metadata"]["dia_id"]: line["role"] for s in sessions.values() for line in s}
    assert roles == {
        "D1:1": "user",
        "D1:2": "assistant",
        "D1:3": "user",
        "D2:1": "assistant",
        "D2:2": "user",
    }
