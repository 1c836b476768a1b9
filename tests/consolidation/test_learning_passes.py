"""Scenarios 37, 39, 41 on the services: associations, reinforcement catch-up, promotion."""

from __future__ import annotations

import pytest

from consolidation.services.promotion import Evidence, stage_for
from memory.models import Association, LearningApplication, Memory
from tests.consolidation.support import (
    activate,
    changes,
    commit,
    feedback_all,
    fresh_scope,
    remember,
    run_pass,
    salience,
)

pytestmark = pytest.mark.django_db

LEDGER_FACT = "The billing service stores invoices in the Postgres ledger database"
ARCHIVE_FACT = "Invoices older than seven years are archived to cold storage"


def _pair_used_together(scope: str) -> tuple[int, int]:
    opened = activate(scope, "Write down where billing data lives")
    first = remember(scope, opened["session_id"], LEDGER_FACT)
    second = remember(scope, opened["session_id"], ARCHIVE_FACT)
    commit(opened["session_id"])
    both = activate(scope, "Where are billing invoices stored?\nWhen are old invoices archived?")
    assert {m["memory_id"] for m in both["memories"]} == {f"sch_{first}", f"sch_{second}"}
    feedback_all(both, assessment="used")
    commit(both["session_id"])
    return first, second


def test_it_links_consecutive_remembers_used_together():
    scope = fresh_scope()
    first, second = _pair_used_together(scope)
    counts = run_pass("maintain_associations", scope)
    edges = {a.kind: a.weight for a in Association.objects.filter(src_id=first, dst_id=second)}
    assert edges["temporal"] == 0.5 and edges["cooccurrence"] == 0.25
    assert counts["temporal_created"] == 1 and counts["cooccurrence_created"] == 1
    assert changes(run_pass("maintain_associations", scope)) == 0


def test_it_shows_a_temporal_neighbour_as_associated_outside_the_budget():
    # Through activate: the pathway mechanics, whatever recall adds (scenario 37's recall form is
    # covered end to end in test_acceptance_e2e).
    scope = fresh_scope()
    first, second = _pair_used_together(scope)
    run_pass("maintain_associations", scope)
    reply = activate(scope, "Which database does the billing service use?")
    shown = [(m["memory_id"], m["pathway"]) for m in reply["memories"]]
    assert shown == [(f"sch_{first}", "direct"), (f"sch_{second}", "associated")]
    assert reply["relevant_total"] == 1
    accepted = feedback_all(reply, assessment="used")
    assert accepted["rejected"] == []


def test_it_catches_up_reinforcement_the_feedback_call_did_not_apply():
    scope = fresh_scope()
    seed = activate(scope, "Seed")
    pk = remember(scope, seed["session_id"], LEDGER_FACT)
    commit(seed["session_id"])
    shown = activate(scope, "Which database holds the billing invoices?")
    start = salience(pk)
    feedback_all(shown, assessment="used")
    assert salience(pk) == pytest.approx(start + 0.30)
    assert changes(run_pass("reinforce", scope)) == 0  # applied live, nothing left to do
    # As if the row had arrived without its application (an import, a crash between the two).
    LearningApplication.objects.filter(retrieval_id=shown["retrieval_id"]).delete()
    Memory.objects.filter(pk=pk).update(salience=start)
    assert run_pass("reinforce", scope)["reinforced"] == 1
    assert salience(pk) == pytest.approx(start + 0.30)
    assert changes(run_pass("reinforce", scope)) == 0
    feedback_all(shown, assessment="used", effect="harmed")
    assert salience(pk) == pytest.approx(start - 0.50)
    assert changes(run_pass("reinforce", scope)) == 0


def test_it_keeps_reinforced_salience_within_bounds():
    scope = fresh_scope()
    seed = activate(scope, "Seed")
    pk = remember(scope, seed["session_id"], LEDGER_FACT)
    commit(seed["session_id"])
    Memory.objects.filter(pk=pk).update(salience=19.9)
    feedback_all(activate(scope, "Which database holds the billing invoices?"), assessment="used")
    Memory.objects.filter(pk=pk).update(salience=0.2)
    feedback_all(
        activate(scope, "Which database holds the billing invoices?"),
        assessment="used",
        effect="harmed",
    )
    assert salience(pk) == 0.01


@pytest.mark.parametrize(
    "scopes, sessions, active, expected",
    [
        (["project:a"], 1, 5, 0),
        (["project:a", "project:b"], 2, 5, 1),
        (["project:a", "project:b", "project:c"], 3, 5, 1),
        (
            ["project:a", "project:b", "project:c"],
            3,
            3,
            2,
        ),  # scope floor capped at the active count
        (
            ["project:a", "project:b", "client:c", "project:d"],
            2,
            5,
            2,
        ),  # kind bonus lifts sessions to 3
        ([f"project:{i}" for i in range(8)], 5, 9, 3),
        ([f"project:{i}" for i in range(8)], 5, 12, 2),  # breadth 0.67: below stage 3's 0.78
        ([f"project:{i}" for i in range(8)], 5, 20, 1),  # breadth 0.40: below stage 2's 0.55
    ],
)
def test_it_computes_stages_from_scopes_breadth_and_sessions(scopes, sessions, active, expected):
    evidence = Evidence(set(scopes), {f"s{i}" for i in range(sessions)})
    assert stage_for(evidence, active) == expected


def test_it_promotes_a_memory_corroborated_in_two_other_project_scopes():
    origin, second, third = fresh_scope("a"), fresh_scope("b"), fresh_scope("c")
    elsewhere, client = fresh_scope("d"), fresh_scope("x", kind="client")
    for scope in (elsewhere, client):  # scopes active in the last 90 days, beyond the three
        commit(activate(scope, "Unrelated setup work")["session_id"])
    stored = []
    for scope in (origin, second, third):
        opened = activate(scope, "Record the deployment policy")
        stored.append(
            remember(scope, opened["session_id"], "Production deploys need two approving reviews")
        )
        commit(opened["session_id"])
    counts = run_pass("promote_generalization")
    assert Memory.objects.get(pk=stored[0]).generalization_stage == 1
    assert counts["stage_1"] >= 1 and counts["stage_2"] == 0
    assert changes(run_pass("promote_generalization")) == 0
    shown = activate(elsewhere, "How many approving reviews does a production deploy need?")
    assert [m["memory_id"] for m in shown["memories"]][:1] in (
        [f"sch_{stored[0]}"],
        [f"sch_{stored[1]}"],
    )
    assert (
        activate(client, "How many approving reviews does a production deploy need?")["memories"]
        == []
    )
