"""LongMemEval bench: loading, the scored filter, chunking, metrics, baselines and the report."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console

from slowave_site.bench.longmemeval import run_longmemeval
from slowave_site.bench.longmemeval_data import (
    chunks,
    documents,
    load_longmemeval,
    parse_date,
    question_documents,
    select,
)
from slowave_site.bench.longmemeval_metrics import (
    LmeResult,
    aggregate,
    ndcg,
    question_metrics,
    ranked_sessions,
)
from slowave_site.bench.longmemeval_report import print_report
from slowave_site.bench.results import RankedItem
from tests.bench.lme_tiny import LONG_TURN, write_lme


@pytest.fixture
def lme_file(tmp_path: Path) -> Path:
    return write_lme(tmp_path)


def items(*keys: tuple[str, ...]) -> list[RankedItem]:
    return [RankedItem(f"item {i}", k) for i, k in enumerate(keys)]


def test_it_loads_questions_with_utc_dates_and_stable_turn_keys(lme_file: Path):
    puppy, marathons, abstention, hotel = load_longmemeval(lme_file)
    assert puppy.question_date == datetime(2023, 6, 1, 10, 0, tzinfo=UTC)
    assert marathons.answer == "2"  # answers that are numbers in the file are kept as text
    session = puppy.sessions[1]
    assert (session.session_id, session.occurred_at) == (
        "s-puppy",
        datetime(2023, 5, 20, 2, 21, tzinfo=UTC),
    )
    assert [(t.key, t.role, t.has_answer) for t in session.turns] == [
        ("s-puppy#0", "user", True),
        ("s-puppy#1", "assistant", False),
        ("s-puppy#2", "user", False),
    ]
    # Replayed in date order, whatever the file's order.
    assert [s.session_id for s in puppy.chronological()] == ["s-puppy", "s-novel", "s-pasta"]
    assert abstention.is_abstention and not hotel.is_abstention
    assert hotel.evidence_turns("user") == () and hotel.evidence_turns("both") == ("a-lisbon#1",)


def test_it_parses_dates_and_refuses_unreadable_ones():
    assert parse_date("2023/05/20 (Sat) 02:21") == datetime(2023, 5, 20, 2, 21, tzinfo=UTC)
    assert parse_date("2023/5/2 7:05") == datetime(2023, 5, 2, 7, 5, tzinfo=UTC)
    with pytest.raises(ValueError, match="unreadable date"):
        parse_date("20 May 2023")


def test_it_rejects_files_that_are_not_longmemeval_layout(tmp_path: Path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"question_id": "x"}]))
    with pytest.raises(ValueError, match="question 0 is not in LongMemEval layout"):
        load_longmemeval(bad)
    bad.write_text(json.dumps({"question_id": "x"}))
    with pytest.raises(ValueError, match="expected a list of questions"):
        load_longmemeval(bad)


def test_it_scores_only_questions_with_evidence_in_the_indexed_roles(lme_file: Path):
    questions = load_longmemeval(lme_file)
    assert [q.question_id for q in select(questions)] == ["q-puppy", "q-marathons"]
    both = select(questions, roles="both")
    assert [q.question_id for q in both] == ["q-puppy", "q-marathons", "q-hotel"]
    assert [q.question_id for q in select(questions, limit=1)] == ["q-puppy"]
    picked = select(questions, wanted=["q-marathons"])
    assert [q.question_id for q in picked] == ["q-marathons"]
    with pytest.raises(ValueError, match="'q-cat_abs' is not scored: an abstention question"):
        select(questions, wanted=["q-cat_abs"])
    with pytest.raises(ValueError, match="'q-hotel' is not scored"):
        select(questions, wanted=["q-hotel"])
    with pytest.raises(ValueError, match="no question 'q-nope'"):
        select(questions, wanted=["q-nope"])
    with pytest.raises(ValueError, match="unknown roles"):
        select(questions, roles="assistant")


def test_it_cuts_turns_longer_than_a_memory_at_whitespace():
    pieces = chunks(LONG_TURN)
    assert len(LONG_TURN) > 8_000 and len(pieces) == 2
    assert all(len(p) <= 8_000 for p in pieces)
    assert " ".join(pieces).split() == LONG_TURN.split()  # nothing lost, no word split
    assert chunks("short text") == ["short text"]
    assert chunks("x" * 10, limit=4) == ["xxxx", "xxxx", "xx"]  # no whitespace: a hard cut
    assert chunks("ab cd ef", limit=5) == ["ab cd", "ef"]


def test_it_indexes_the_turns_of_the_indexed_roles_as_is_with_chunks_sharing_a_key(
    lme_file: Path,
):
    puppy = load_longmemeval(lme_file)[0]
    docs = question_documents(puppy)
    assert [d.turn.key for d in docs] == [
        "s-puppy#0",
        "s-puppy#2",
        "s-novel#0",
        "s-novel#0",
        "s-pasta#0",
    ]
    assert docs[0].text == "I just brought home my new puppy, a corgi named Biscuit!"
    assert docs[0].occurred_at == datetime(2023, 5, 20, 2, 21, tzinfo=UTC)
    roles_both = documents(puppy.sessions[1], "both")
    assert [d.turn.role for d in roles_both] == ["user", "assistant", "user"]


def test_it_maps_the_first_k_items_to_sessions_in_order_of_first_appearance():
    ranked = items(("A#1",), ("A#2",), ("X#0",), ("B#3", "C#0"), ("B#4",))
    assert ranked_sessions(ranked, 2) == ["A"]
    assert ranked_sessions(ranked, 4) == ["A", "X", "B", "C"]
    assert ranked_sessions(items((), ("Y#1",)), 5) == ["Y"]  # an item behind no turn adds none


def test_it_computes_ndcg_with_binary_relevance_by_hand():
    one, two, three = 1.0, 1 / math.log2(3), 0.5  # 1/log2(rank + 1) for ranks 1..3
    assert ndcg(["A", "B"], {"A", "B"}, 5) == pytest.approx(1.0)
    assert ndcg(["X", "A", "B"], {"A", "B"}, 5) == pytest.approx((two + three) / (one + two))
    assert ndcg(["X", "A"], {"A"}, 5) == pytest.approx(two)
    # Cut at k before scoring; the ideal is capped at k relevant sessions too.
    assert ndcg(["X", "Y", "A"], {"A"}, 2) == 0.0
    assert ndcg(["A"], {"A", "B", "C"}, 1) == pytest.approx(1.0)
    assert ndcg(["A"], set(), 5) == 0.0


def test_it_scores_session_and_turn_recall_per_question(lme_file: Path):
    marathons = load_longmemeval(lme_file)[1]  # gold: m-boston, m-chicago
    result = LmeResult(
        marathons,
        items(
            ("m-garden#0",), ("m-boston#0",), *[(f"z{i}#0",) for i in range(4)], ("m-chicago#0",)
        ),
    )
    got = question_metrics(result, "user")
    assert got["session_recall_any@5"] == 1.0 and got["session_recall_all@5"] == 0.0
    assert got["session_recall_all@10"] == 1.0
    assert got["session_ndcg@5"] == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    expected_10 = (1 / math.log2(3) + 1 / math.log2(8)) / (1 + 1 / math.log2(3))
    assert got["session_ndcg@10"] == pytest.approx(expected_10)
    assert got["turn_recall_all@5"] == 0.0 and got["turn_recall_all@10"] == 1.0
    summary = aggregate([result, LmeResult(marathons, [])], "user")
    assert summary["overall"]["n"] == 2 and summary["overall"]["session_recall_all@10"] == 0.5
    assert list(summary["types"]) == ["multi-session"]
    assert len(LmeResult(marathons, items(*[(f"z{i}#0",) for i in range(15)])).items) == 10


def test_it_runs_the_baselines_over_each_haystack_and_writes_json(lme_file: Path, tmp_path: Path):
    out = tmp_path / "report.json"
    report = run_longmemeval(
        str(lme_file), baselines=["bm25", "bm25"], slowave=False, out=str(out), details=True
    )
    assert list(report["methods"]) == ["bm25"]
    bm25 = report["methods"]["bm25"]
    assert bm25["overall"]["n"] == 2 and set(bm25["types"]) == {
        "multi-session",
        "single-session-user",
    }
    assert bm25["types"]["single-session-user"]["session_recall_all@5"] == 1.0
    config = report["config"]
    assert config["questions"] == ["q-puppy", "q-marathons"] and config["roles"] == "user"
    assert config["skipped_in_file"] == {"abstention": 1, "no_evidence_in_indexed_roles": 1}
    assert (config["turns"], config["documents"]) == (7, 8)  # the long turn is two documents
    assert config["policy"]["version"].startswith("slowave-hybrid-")
    written = json.loads(out.read_text())
    first = written["questions"]["bm25"][0]
    assert first["question_id"] == "q-puppy" and first["items"][0]["turns"] == ["s-puppy#0"]
    assert first["items"][0]["text"].startswith("[20 May 2023] I just brought home")


def test_it_prints_a_table_per_method_within_80_columns(lme_file: Path):
    report = run_longmemeval(str(lme_file), baselines=["bm25"], slowave=False, roles="both")
    console = Console(record=True, width=80)
    print_report(report, console)
    text = console.export_text()
    assert "LongMemEval — bm25 (latency: ms per search call)" in text
    assert "ss-assistant" in text and "overall" in text and "roles both" in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_it_refuses_nothing_to_run_and_unknown_baselines(lme_file: Path):
    with pytest.raises(ValueError, match="nothing to run"):
        run_longmemeval(str(lme_file), slowave=False)
    with pytest.raises(ValueError, match="unknown baseline 'tfidf'"):
        run_longmemeval(str(lme_file), baselines=["tfidf"], slowave=False)
