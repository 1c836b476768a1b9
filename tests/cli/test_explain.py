"""`slowave explain`: each item's rank, score and signal contributions, for people and scripts,
on a recall ranked by the real model (spec §11, turn 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.runner import Result, cli_env, run_python, slowave

SCOPE = "project:explain-cli"
SIGNALS = ("topical", "coverage", "rrf")


def _env(home: Path) -> dict[str, str]:
    # Wide enough that rich keeps each item's contributions on one or two lines.
    return cli_env(home, SLOWAVE_EMBEDDER="onnx", COLUMNS="200")


@pytest.fixture(scope="module")
def recall(home: Path) -> dict[str, Any]:
    code = (
        "import json; from tests.cli.seeding import seed_paged_recall; "
        f"print(json.dumps(seed_paged_recall({SCOPE!r})))"
    )
    out = run_python(home, code, env=_env(home), timeout=300)
    return json.loads(out.strip().splitlines()[-1])


def _explain(home: Path, *args: str) -> Result:
    return slowave(home, *args, env=_env(home))


def test_it_lists_each_contribution_summing_to_the_score_as_json(
    home: Path, recall: dict[str, Any]
) -> None:
    result = _explain(home, "--json", "explain", recall["retrieval"])
    assert result.code == 0, result.err
    data = result.json()["data"]
    assert data["retrieval_id"] == recall["retrieval"] and data["kind"] == "recall"
    assert data["policy_version"].startswith("slowave-hybrid-")
    assert [i["ref"] for i in data["items"]] == recall["shown"]  # page one, as shown
    assert all(i["exposed"] and i["page"] == 0 for i in data["items"])
    assert data["items"][0]["feedback"]["label"] == "used / helped"
    scores = [i["score"] for i in data["items"]]
    assert scores == sorted(scores, reverse=True)
    for item in data["items"]:
        names = [c["signal"] for c in item["signals"]]
        assert names[:3] == list(SIGNALS), names
        assert abs(sum(c["value"] for c in item["signals"]) - item["score"]) < 2e-3
    assert set(SIGNALS) <= set(data["signal_names"])
    everything = _explain(home, "--json", "explain", recall["retrieval"], "--all").json()["data"]
    assert len(everything["items"]) == everything["catalogued"] > len(data["items"])
    assert {i["exposed"] for i in everything["items"][len(data["items"]) :]} == {False}


def test_it_prints_a_table_of_contributions_for_people(home: Path, recall: dict[str, Any]) -> None:
    result = _explain(home, "explain", recall["retrieval"])
    assert result.code == 0, result.err
    data = _explain(home, "--json", "explain", recall["retrieval"]).json()["data"]
    first = data["items"][0]
    out = result.out
    assert recall["retrieval"] in out and data["policy_version"] in out
    assert first["ref"] in out and f"{first['score']:.3f}" in out
    signal, value = first["signals"][0]["signal"], first["signals"][0]["value"]
    assert f"{signal} {value:+.3f}" in out and f"= {first['score']:.3f}" in out
    assert "retries failed requests" in out  # each item's preview
    assert "feedback: used / helped" in out and "feedback: irrelevant" in out
    assert "topical: absolute relevance" in out  # what each signal means
    assert "never shown to the agent; --all lists them" in out
    everything = _explain(home, "explain", "--all", recall["retrieval"])
    assert everything.code == 0 and "not shown" in everything.out
    assert "--all lists them" not in everything.out


def test_it_says_not_found_with_exit_1(home: Path, recall: dict[str, Any]) -> None:
    result = _explain(home, "explain", "rec_nope")
    assert result.code == 1 and "no retrieval rec_nope" in result.err
    assert "slowave show sess_" in result.err
    as_json = _explain(home, "--json", "explain", "rec_nope")
    assert as_json.code == 1
    assert json.loads(as_json.out)["error"]["code"] == "not_found"


def test_it_exits_2_on_usage_errors(home: Path) -> None:
    assert _explain(home, "explain").code == 2
    assert _explain(home, "explain", "rec_x", "--colour").code == 2
