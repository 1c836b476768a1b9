from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from slowave_site.bench.locomo import main, run_locomo
from slowave_site.bench.locomo_data import Sample
from slowave_site.bench.report import print_report
from slowave_site.bench.results import QuestionResult, RankedItem
from tests.bench.conftest import locomo_payload


def oracle_runner(sample: Sample) -> list[QuestionResult]:
    """A fake Slowave: returns each question's gold turns, as the real runner would shape them."""
    results = []
    for q in sample.questions:
        turns = [sample.turn_by_dia_id[d] for d in q.evidence if d in sample.turn_by_dia_id]
        items = [
            RankedItem.from_content(
                t.content, t.occurred_at, [t.dia_id], ref=f"sch_{i}", pathway="direct"
            )
            for i, t in enumerate(turns)
        ]
        results.append(QuestionResult(q, items, {"recall": [1.0], "activate": [2.0]}))
    return results


def test_it_runs_slowave_beside_baselines_and_writes_json(locomo_file: Path, tmp_path: Path):
    out = tmp_path / "out" / "report.json"
    report = run_locomo(
        str(locomo_file),
        baselines=["bm25", "bm25"],
        slowave_runner=oracle_runner,
        out=str(out),
        details=True,
        config={"ingest": "remember"},
    )
    assert list(report["methods"]) == ["slowave", "bm25"]
    slowave = report["methods"]["slowave"]
    assert slowave["overall"]["n"] == 5 and slowave["overall"]["recall@5"] == 1.0
    assert slowave["latency"]["activate"]["p50_ms"] == 2.0
    assert report["methods"]["bm25"]["wall_seconds"] >= 0
    assert report["config"]["ingest"] == "remember"
    assert report["config"]["questions"] == 5 and report["config"]["turns"] == 5
    written = json.loads(out.read_text())
    assert written["methods"]["bm25"]["overall"]["n"] == 5
    assert len(written["questions"]["slowave"]) == 5
    assert written["questions"]["slowave"][2]["items"][0]["text"].startswith("[8 May 2023] Ann:")


def test_it_rejects_a_runner_that_skips_questions(locomo_file: Path):
    def partial(sample: Sample) -> list[QuestionResult]:
        return oracle_runner(sample)[:-1]

    with pytest.raises(ValueError, match="answered 4 questions"):
        run_locomo(str(locomo_file), slowave_runner=partial)
    with pytest.raises(ValueError, match="nothing to run"):
        run_locomo(str(locomo_file))


def test_it_prints_a_table_per_method(locomo_file: Path):
    report = run_locomo(str(locomo_file), baselines=["bm25"], slowave_runner=oracle_runner)
    console = Console(record=True, width=100)
    print_report(report, console)
    text = console.export_text()
    assert "LoCoMo — slowave (latency: ms per recall call)" in text
    assert "LoCoMo — bm25 (latency: ms per search call)" in text
    assert "5 adversarial" in text and "overall" in text and "activate: p50 2.0 ms" in text


def test_it_runs_standalone_from_the_command_line(locomo_file: Path, tmp_path: Path, capsys):
    out = tmp_path / "cli.json"
    assert main([str(locomo_file), "--baseline", "bm25", "--out", str(out)]) == 0
    assert "LoCoMo — bm25" in capsys.readouterr().out
    assert json.loads(out.read_text())["methods"]["bm25"]["overall"]["n"] == 5
    assert main([str(tmp_path / "missing.json"), "--baseline", "bm25"]) == 1
    with pytest.raises(SystemExit) as usage:
        main([str(locomo_file)])
    assert usage.value.code == 2


def test_it_runs_only_the_chosen_samples(tmp_path: Path):
    two = locomo_payload() + [{**locomo_payload()[0], "sample_id": "conv-t2"}]
    path = tmp_path / "two.json"
    path.write_text(json.dumps(two), encoding="utf-8")
    report = run_locomo(str(path), samples=["conv-t2"], slowave_runner=oracle_runner)
    assert report["config"]["samples"] == ["conv-t2"]
    assert report["methods"]["slowave"]["overall"]["n"] == 5
    assert run_locomo(str(path), slowave_runner=oracle_runner)["config"]["samples"] == [
        "conv-t1",
        "conv-t2",
    ]
    with pytest.raises(ValueError, match="no sample 'conv-9'; it holds conv-t1, conv-t2"):
        run_locomo(str(path), samples=["conv-9"], slowave_runner=oracle_runner)
    assert main([str(path), "--baseline", "bm25", "--sample", "conv-t1"]) == 0
