"""show, forget, unforget and stats on memory built by agents (spec §10, §11, scenario 40)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.cli.conftest import SCOPE
from tests.cli.runner import slowave


def _show(home: Path, ref: str) -> dict[str, Any]:
    result = slowave(home, "--json", "show", ref)
    assert result.code == 0, result.err
    return result.json()["data"]


def test_it_shows_a_memory_with_its_evidence_chain(home: Path, seeded: dict[str, Any]) -> None:
    used = seeded["shown"][1]
    human = slowave(home, "show", used)
    assert human.code == 0, human.err
    assert "migrations applied" in human.out and "Where it came from" in human.out
    assert seeded["retrieval"] in human.out and "used / helped" in human.out
    chain = _show(home, used)
    assert chain["memory"]["id"] == used and chain["memory"]["status"] == "active"
    assert {s["kind"] for s in chain["supports"]} == {"source_event", "source_episode"}
    assert chain["exposures"][0]["retrieval_id"] == seeded["retrieval"]
    assert chain["generalization"]["stage"] == 0


def test_it_shows_sessions_retrievals_and_procedures(home: Path, seeded: dict[str, Any]) -> None:
    session = _show(home, seeded["session"])
    assert session["kind"] == "session" and session["feedback_complete"] is True
    assert session["record"]["outcome"] == "success"
    retrieval = _show(home, seeded["retrieval"])
    assert {e["target_id"] for e in retrieval["exposures"]} == set(seeded["shown"])
    assert "stale / outdated" in {e["feedback"] for e in retrieval["exposures"]}
    assert _show(home, seeded["procedure"])["record"]["summary"] == "Deploy staging safely"


def test_it_says_not_found_with_exit_1(home: Path, seeded: dict[str, Any]) -> None:
    for ref in ("sch_999999", "nonsense", "sess_0000000000000000"):
        result = slowave(home, "show", ref)
        assert result.code == 1 and f"not found: {ref}" in result.err


def test_it_forgets_and_unforgets_with_a_reason(home: Path, seeded: dict[str, Any]) -> None:
    target = seeded["ids"][2]
    forgot = slowave(home, "--json", "forget", target, "--reason", "invoices moved to billing")
    assert forgot.code == 0, forgot.err
    assert forgot.json()["data"] == {
        "id": target,
        "action": "forget",
        "prior_status": "active",
        "new_status": "forgotten",
        "changed": True,
        "warnings": [],
    }
    again = slowave(home, "forget", target, "--reason", "again")
    assert again.code == 0 and "nothing changed" in again.out
    restored = slowave(home, "unforget", target)
    assert restored.code == 0 and f"{target} restored to active" in restored.out
    log = _show(home, target)["forget_log"]
    assert [(f["action"], f["prior_status"], f["new_status"]) for f in log] == [
        ("forget", "active", "forgotten"),
        ("unforget", "forgotten", "active"),
    ]
    assert log[0]["reason"] == "invoices moved to billing" and log[0]["actor"].startswith("cli")
    twice = slowave(home, "unforget", target)
    assert twice.code == 1 and f"memory is not forgotten: {target}" in twice.err


def test_it_restores_the_prior_status_of_a_stale_memory(home: Path, seeded: dict[str, Any]) -> None:
    stale = seeded["stale"]
    assert _show(home, stale)["memory"]["status"] == "stale"
    assert slowave(home, "forget", stale, "--reason", "superseded by the green env").code == 0
    assert slowave(home, "unforget", stale).code == 0
    assert _show(home, stale)["memory"]["status"] == "stale"


def test_it_refuses_bad_arguments_and_changes_nothing(home: Path, seeded: dict[str, Any]) -> None:
    target = seeded["ids"][0]
    before = _show(home, target)
    cases = [
        (("forget", target), 2, "--reason"),
        (("forget", target, "--reason", "   "), 1, "a reason is required"),
        (("forget", target, "--reason", "x" * 501), 1, "at most 500"),
        (("forget", "abc", "--reason", "r"), 1, "expected sch_N or proc_"),
        (("forget", "sch_999999", "--reason", "r"), 1, "no memory sch_999999"),
        (("unforget",), 2, "ref"),
    ]
    for args, code, message in cases:
        result = slowave(home, *args)
        assert result.code == code, (args, result.err)
        assert message in result.err, (args, result.err)
    assert _show(home, target) == before


def test_it_forgets_and_restores_procedures(home: Path, seeded: dict[str, Any]) -> None:
    proc = seeded["procedure"]
    assert slowave(home, "forget", proc, "--reason", "steps changed").code == 0
    assert _show(home, proc)["record"]["status"] == "forgotten"
    assert slowave(home, "unforget", proc).code == 0
    assert _show(home, proc)["record"]["status"] == "active"


def test_it_reports_stats_overall_and_per_scope(home: Path, seeded: dict[str, Any]) -> None:
    overall = slowave(home, "--json", "stats")
    assert overall.code == 0
    data = overall.json()["data"]
    assert data["memories"] == 4 and data["memories_by_status"]["forgotten"] == 1
    assert data["memories_by_scope"] == {SCOPE: 4}
    scoped = slowave(home, "stats", "--scope", "project:elsewhere")
    assert scoped.code == 0 and "project:elsewhere" in scoped.out
    bad = slowave(home, "stats", "--scope", "nocolon")
    assert bad.code == 2 and "kind:id" in bad.err
