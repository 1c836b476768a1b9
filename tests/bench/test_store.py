"""Kept stores and policy overrides for the LoCoMo bench (hash embedder: mechanics only)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memory.retrieval import policy
from slowave_site.bench.locomo_run import run_locomo_bench
from slowave_site.bench.store import MANIFEST, StoreMismatch


def _items(report: dict) -> list[list[tuple[str, tuple[str, ...]]]]:
    return [
        [(i["ref"], tuple(i["dia_ids"])) for i in row["items"]]
        for row in report["questions"]["slowave"]
    ]


def test_it_ingests_each_conversation_then_asks_without_a_store(
    locomo_file: Path, hash_embedder: None, django_db_blocker
):
    with django_db_blocker.unblock():
        report = run_locomo_bench(str(locomo_file), consolidate=False, details=True)
    assert report["config"]["store"] is None and report["config"]["ingest_reused"] is False
    assert report["methods"]["slowave"]["overall"]["n"] == 5
    rows = report["questions"]["slowave"]
    assert all(i["dia_ids"] for row in rows for i in row["items"])  # every memory maps to turns


def test_it_keeps_the_consolidated_store_and_reuses_it(
    locomo_file: Path, tmp_path: Path, hash_embedder: None, django_db_blocker
):
    store = tmp_path / "locomo-store"
    with django_db_blocker.unblock():
        first = run_locomo_bench(str(locomo_file), store=str(store), details=True)
        again = run_locomo_bench(str(locomo_file), store=str(store), details=True)
        with pytest.raises(StoreMismatch, match="consolidation=True, not False"):
            run_locomo_bench(str(locomo_file), store=str(store), consolidate=False)
    assert (first["config"]["ingest_reused"], again["config"]["ingest_reused"]) == (False, True)
    assert _items(again) == _items(first)
    manifest = json.loads((store / MANIFEST).read_text())
    assert manifest["bench"] == "locomo" and manifest["items"] == ["conv-t1"]
    assert manifest["options"]["consolidation"] is True  # the pass belongs to the ingest
    mapped = {d for ids in manifest["mapping"]["conv-t1"].values() for d in ids}
    assert mapped == {"D1:1", "D1:2", "D1:3", "D2:1", "D2:2"}


def test_it_records_the_policy_and_refuses_bad_combinations(
    locomo_file: Path, tmp_path: Path, hash_embedder: None, django_db_blocker
):
    with django_db_blocker.unblock():
        report = run_locomo_bench(
            str(locomo_file), consolidate=False, policy=["speakers.lead=1", "floor=0.3"]
        )
    config = report["config"]
    assert config["policy"]["overrides"] == ["speakers.lead=1", "floor=0.3"]
    assert config["policy"]["version"] != policy.DEFAULT_POLICY.version
    assert config["min_relevance"] == 0.3  # the floor the questions were ranked with
    assert policy.active() == policy.DEFAULT_POLICY
    with pytest.raises(ValueError, match="exclusive"):
        run_locomo_bench(str(locomo_file), db=str(tmp_path / "x.db"), store=str(tmp_path))
    with pytest.raises(CommandError, match="policy speakers.lead takes a whole number, not '1.5'"):
        call_command("bench", "locomo", str(locomo_file), "--policy", "speakers.lead=1.5")
