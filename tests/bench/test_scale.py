"""`slowave bench scale`: its report, and the embedders it measures beside its own run."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from django.conf import settings

from tests.conftest import REPO_ROOT
from tests.pg_support import fresh_postgres_database

ENTRY = "import sys; from slowave_site.cli import main; main(sys.argv[1:])"


def _bench(
    tmp_path, *extra: str, store: bool = True, cold_model: bool = False, models=None
) -> subprocess.CompletedProcess[str]:
    """The bench at 24 memories; its cold process loads the model only when `cold_model`.
    `models`: the SLOWAVE_MODEL_DIR to give it (default: the tests' own, with the export)."""
    env = {**os.environ, "SLOWAVE_HOME": str(tmp_path / "home")}
    env["SLOWAVE_MODEL_DIR"] = str(models or settings.SLOWAVE_MODEL_DIR)
    return subprocess.run(
        [
            sys.executable,
            "-c",
            ENTRY,
            "bench",
            "scale",
            "--memories",
            "24",
            "--scopes",
            "2",
            "--queries",
            "4",
            "--embedder",
            "hash",
            *(["--db", str(tmp_path / "scale.sqlite3")] if store else []),
            *([] if cold_model else ["--no-cold-model"]),
            *extra,
        ],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_it_measures_the_named_embedders_each_in_its_own_process(tmp_path):
    done = _bench(tmp_path, "--embedders", "onnx-fp32,onnx-int8")
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["memories"] == 24 and report["embedder"] == "hash-384"
    rows = report["embedders"]
    assert [row["mode"] for row in rows] == ["onnx-fp32", "onnx-int8"]
    for row in rows:
        assert row["query_p50_ms"] > 0 and row["batch_texts_per_second"] > 0
        assert row["long_64x8000_seconds"] > 0 and row["rss_after_load_mb"] > 0
        # LoCoMo-like turns through memory_remember, in the child's own scratch store
        assert row["remember_turns_per_second"] > 0 and row["remember_turn_chars_mean"] > 100


def test_a_first_run_without_an_onnx_export_skips_those_modes_in_one_line(tmp_path):
    empty = tmp_path / "models"
    empty.mkdir()
    done = _bench(tmp_path, "--embedders", "onnx-fp32,onnx-int8", models=empty)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["embedders"] == [] and report["recall_ms"]["p50"] > 0
    assert sorted(report["embedders_skipped"]) == ["onnx-fp32", "onnx-int8"]
    said = [line for line in done.stderr.splitlines() if "not measured" in line]
    assert len(said) == 2 and all("no fresh ONNX export" in line for line in said)
    assert "Traceback" not in done.stderr
    assert list(empty.iterdir()) == []  # nothing exported, nothing fetched


def test_it_skips_the_embedders_when_told_and_refuses_unknown_ones(tmp_path):
    done = _bench(tmp_path, "--embedders", "")
    assert done.returncode == 0 and "embedders" not in json.loads(done.stdout)
    refused = _bench(tmp_path, "--embedders", "onnx-fp32,bert")
    assert refused.returncode != 0 and "unknown bert" in refused.stderr


def test_it_times_a_cold_process_to_its_first_recall_with_and_without_the_model(tmp_path):
    done = _bench(tmp_path, "--embedders", "", cold_model=True)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    alone, with_model = report["cold"]
    assert [alone["model_loaded"], with_model["model_loaded"]] == [False, True]
    for row in (alone, with_model):
        assert 0 < row["spawn_to_first_recall_s"] < 120
        assert row["first_recall_ms"] > 0 and row["warm_recall_p50_ms"] > 0
        assert 0 < row["rss_mb"] <= row["peak_rss_mb"]
    # the model's weights are in the second process only
    assert with_model["rss_mb"] > alone["rss_mb"] + 20
    assert len(report["load_average"]) == 3 and len(report["load_after_ingest"]) == 3


def test_it_asks_a_store_filled_by_an_earlier_run_again_without_ingesting(tmp_path):
    first = _bench(tmp_path, "--embedders", "")
    assert first.returncode == 0, first.stderr[-2000:]
    assert json.loads(first.stdout)["store_reused"] is False
    again = _bench(tmp_path, "--embedders", "")
    assert again.returncode == 0, again.stderr[-2000:]
    report = json.loads(again.stdout)
    assert report["store_reused"] is True and report["ingest_per_second"] is None
    assert report["recall_ms"]["p50"] > 0
    other = _bench(tmp_path, "--embedders", "", "--memories", "30")
    assert other.returncode != 0 and "holds 24 memories of an earlier run" in other.stderr


def test_it_runs_on_postgresql_with_pgvector_when_given_a_database_url(tmp_path):
    with fresh_postgres_database() as url:
        done = _bench(tmp_path, "--embedders", "", "--database-url", url, store=False)
        assert done.returncode == 0, done.stderr[-2000:]
        report = json.loads(done.stdout)
        assert report["database"] == "postgresql" and report["vector_backend"] == "pgvector"
        assert report["memories"] == 24 and report["recall_ms"]["p50"] > 0
        # the cold process found the same store through DATABASE_URL
        (cold,) = report["cold"]
        assert cold["model_loaded"] is False and cold["first_recall_ms"] > 0
        again = _bench(tmp_path, "--embedders", "", "--database-url", url, store=False)
        assert json.loads(again.stdout)["store_reused"] is True, again.stderr[-2000:]
    refused = _bench(tmp_path, "--embedders", "", "--database-url", "sqlite:///x.db", store=False)
    assert refused.returncode != 0 and "--database-url must read postgresql://" in refused.stderr
