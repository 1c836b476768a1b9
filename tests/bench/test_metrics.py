from __future__ import annotations

from datetime import UTC, datetime

import pytest

from slowave_site.bench.locomo_data import Question
from slowave_site.bench.metrics import (
    aggregate,
    hypothesis,
    keyword_hit,
    keyword_score,
    keyword_tokens,
    percentile,
    recall_all_at,
)
from slowave_site.bench.results import QuestionResult, RankedItem, render_item


def question(
    category: int = 4,
    answer: str | None = "x",
    adversarial: str | None = None,
    evidence: tuple[str, ...] = ("D1:1",),
    index: int = 0,
) -> Question:
    return Question("s", index, "q?", answer, adversarial, evidence, evidence, category)


def items(*texts: str, ids: tuple[tuple[str, ...], ...] = ()) -> list[RankedItem]:
    return [RankedItem(t, ids[i] if i < len(ids) else ()) for i, t in enumerate(texts)]


def test_it_tokenises_keywords_without_stopwords_or_single_letters():
    assert keyword_tokens("The cat, a DOG and I: 7 x-ray's 2023") == {
        "cat",
        "dog",
        "7",
        "ray",
        "2023",
    }
    assert keyword_tokens(None) == set()


def test_it_scores_keyword_share_and_hits_at_one_half():
    assert keyword_score("red apple pie", "I ate an apple pie") == pytest.approx(2 / 3)
    hit, score = keyword_hit(QuestionResult(question(answer="red apple"), items("apple tart")))
    assert (hit, score) == (True, 0.5)
    hit, _ = keyword_hit(QuestionResult(question(answer="red apple pie"), items("apple tart")))
    assert hit is False


def test_it_stringifies_answers_and_scores_zero_without_answer_tokens():
    assert keyword_score(2022, "[8 May 2022] Ann: hi") == 1.0
    assert keyword_score("the a of", "the a of") == 0.0
    assert keyword_score(None, "anything") == 0.0
    assert keyword_hit(QuestionResult(question(answer=None), items("x")))[0] is False


def test_it_counts_adversarial_hits_only_when_the_planted_answer_is_absent_early():
    q = question(category=5, answer=None, adversarial="sunset painting")
    assert keyword_hit(QuestionResult(q, items("Ann: I painted a sunset painting")))[0] is False
    assert keyword_hit(QuestionResult(q, items("Ann: I like dogs")))[0] is True
    # Only the first 600 characters of the hypothesis count for category 5.
    late = items("x" * 600, "sunset painting")
    assert keyword_hit(QuestionResult(q, late)) == (True, 0.0)


def test_it_renders_items_with_unpadded_day_and_english_month():
    moment = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert render_item("Caroline: hi", moment) == "[8 May 2023] Caroline: hi"
    assert render_item("no date", None) == "no date"
    item = RankedItem.from_content("Ann: yo", datetime(2024, 12, 25, tzinfo=UTC), ["D1:1"])
    assert (item.text, item.dia_ids) == ("[25 December 2024] Ann: yo", ("D1:1",))


def test_it_builds_the_hypothesis_from_the_first_20_items_only():
    many = items(*(f"t{i}" for i in range(25)))
    assert hypothesis(many) == " ".join(f"t{i}" for i in range(20))
    assert len(QuestionResult(question(), many).items) == 20


def test_it_measures_recall_all_at_k_as_the_share_of_gold_ids():
    ranked = items("a", "b", "c", ids=(("D1:1",), ("D9:9",), ("D1:2", "D1:3")))
    gold = ("D1:1", "D1:2", "D1:4")
    assert recall_all_at(gold, ranked, 1) == pytest.approx(1 / 3)
    assert recall_all_at(gold, ranked, 2) == pytest.approx(1 / 3)
    assert recall_all_at(gold, ranked, 3) == pytest.approx(2 / 3)
    assert recall_all_at((), ranked, 5) is None


def test_it_computes_nearest_rank_percentiles():
    values = [15, 20, 35, 40, 50]
    assert percentile(values, 50) == 35
    assert percentile(values, 95) == 50
    assert percentile(list(range(1, 101)), 95) == 95
    assert percentile([7.0], 50) == 7.0
    assert percentile([], 50) is None


def test_it_aggregates_per_category_and_overall_with_evidence_only_recall():
    results = [
        QuestionResult(
            question(4, "cello", index=0),
            items("Bob: cello", ids=(("D1:1",),)),
            {"recall": [2.0, 4.0], "activate": [9.0]},
        ),
        QuestionResult(question(4, "piano", index=1), items("Bob: cello"), {"recall": [6.0]}),
        QuestionResult(
            question(3, "maybe", evidence=(), index=2), items("maybe"), {"recall": [8.0]}
        ),
    ]
    summary = aggregate(results)
    four, overall = summary["categories"]["4"], summary["overall"]
    assert (four["n"], four["hit_pct"], four["recall@5"]) == (2, 50.0, 0.5)
    assert summary["categories"]["1"]["n"] == 0 and summary["categories"]["1"]["hit_pct"] is None
    assert overall["n"] == 3 and overall["hit_pct"] == pytest.approx(200 / 3)
    # The evidence-less question counts for hits but not for recall.
    assert (overall["n_with_evidence"], overall["recall@20"]) == (2, 0.5)
    assert overall["mean_hypothesis_chars"] == pytest.approx((10 + 10 + 5) / 3)
    assert summary["primary_latency"] == "recall"
    assert (overall["p50_ms"], overall["p95_ms"]) == (4.0, 8.0)
    assert summary["latency"]["activate"] == {"calls": 1, "p50_ms": 9.0, "p95_ms": 9.0}
    assert [r["hit"] for r in summary["rows"]] == [True, False, True]
