"""People's controls (memory/services/forgetting.py) on the real database: forget hides a
memory from every retrieval and logs it; unforget brings back the status it had; repeats and
unknown ids are answered, never half-applied."""

from __future__ import annotations

import pytest
from django.utils import timezone

from memory.errors import InvalidInput, NotFound
from memory.ids import memory_pk
from memory.models import ForgetLog, Memory, Procedure
from memory.services.forgetting import (
    control_forget,
    control_unforget,
    memory_forget,
    memory_unforget,
)
from tests.factories import commit, open_session, remember, retrieval, seeded_scope

pytestmark = pytest.mark.django_db

INVOICES = "Invoices are generated on the first day of each month."
PLANTS = "The office plants are watered on Fridays."
QUESTION = "When are invoices generated each month?"


def _shown(scope: str, task: str = QUESTION) -> list[str]:
    return [m["memory_id"] for m in retrieval(scope, task)["memories"]]


def _status(memory_id: str) -> str:
    return Memory.objects.get(pk=memory_pk(memory_id)).status


def _log(memory_id: str) -> list[tuple[str, str, str, str, str]]:
    rows = ForgetLog.objects.filter(memory_id=memory_pk(memory_id)).order_by("pk")
    return [(r.action, r.prior_status, r.new_status, r.reason, r.actor) for r in rows]


def test_forget_hides_the_memory_from_retrieval_and_logs_who_and_why():
    scope, (invoices, plants) = seeded_scope(INVOICES, PLANTS)
    assert invoices in _shown(scope)

    result = memory_forget(
        memory_id=invoices, reason="  wrong project ", actor="ann", now=timezone.now()
    )

    assert result.as_dict() == {
        "id": invoices,
        "action": "forget",
        "prior_status": "active",
        "new_status": "forgotten",
        "changed": True,
        "warnings": [],
    }
    assert _status(invoices) == "forgotten" and _status(plants) == "active"
    assert invoices not in _shown(scope)
    assert invoices not in _shown(scope, task="What happens on the first day of each month?")
    assert _log(invoices) == [("forget", "active", "forgotten", "wrong project", "ann")]


def test_forgetting_twice_changes_nothing_and_logs_once():
    scope, (invoices,) = seeded_scope(INVOICES)
    memory_forget(memory_id=invoices, reason="wrong project", actor="ann", now=timezone.now())

    again = memory_forget(memory_id=invoices, reason="still wrong", actor="bob", now=timezone.now())

    assert (again.changed, again.new_status) == (False, "forgotten")
    assert len(_log(invoices)) == 1


@pytest.mark.parametrize(
    ("reason", "message"),
    [("", "a reason is required"), ("   ", "a reason is required"), ("x" * 501, "at most 500")],
)
def test_forget_without_a_usable_reason_is_refused_and_writes_nothing(reason, message):
    scope, (invoices,) = seeded_scope(INVOICES)

    with pytest.raises(InvalidInput) as refused:
        memory_forget(memory_id=invoices, reason=reason, actor="ann", now=timezone.now())

    assert refused.value.field_errors[0]["path"] == "reason"
    assert message in refused.value.message
    assert _status(invoices) == "active" and _log(invoices) == []


def test_unforget_restores_the_memory_to_retrieval_and_logs_it():
    scope, (invoices,) = seeded_scope(INVOICES)
    memory_forget(memory_id=invoices, reason="by mistake", actor="ann", now=timezone.now())

    result = memory_unforget(memory_id=invoices, actor="bob", now=timezone.now(), reason="oops")

    assert (result.prior_status, result.new_status, result.changed) == ("forgotten", "active", True)
    assert invoices in _shown(scope)
    assert _log(invoices)[-1] == ("unforget", "forgotten", "active", "oops", "bob")


def test_unforget_of_a_memory_that_is_not_forgotten_is_refused():
    scope, (invoices,) = seeded_scope(INVOICES)

    with pytest.raises(InvalidInput) as refused:
        memory_unforget(memory_id=invoices, actor="ann", now=timezone.now())

    assert refused.value.field_errors[0]["path"] == "memory_id"
    assert "not forgotten" in refused.value.message
    assert _log(invoices) == []


def test_unforget_is_refused_while_an_active_memory_has_the_same_text():
    scope, (first,) = seeded_scope(INVOICES)
    memory_forget(memory_id=first, reason="restating it", actor="ann", now=timezone.now())
    _, (second,) = seeded_scope(INVOICES, scope=scope)
    assert second != first

    with pytest.raises(InvalidInput) as refused:
        memory_unforget(memory_id=first, actor="ann", now=timezone.now())

    assert second in refused.value.message
    assert _status(first) == "forgotten"


@pytest.mark.parametrize("control", ["forget", "unforget"])
def test_unknown_and_malformed_ids_are_named_in_the_error(control):
    now = timezone.now()
    calls = {
        "forget": lambda ref: control_forget(ref=ref, reason="gone", actor="ann", now=now),
        "unforget": lambda ref: control_unforget(ref=ref, actor="ann", now=now),
    }

    with pytest.raises(NotFound, match="sch_999999"):
        calls[control]("sch_999999")
    with pytest.raises(NotFound, match="proc_nope"):
        calls[control]("proc_nope")
    with pytest.raises(InvalidInput) as malformed:
        calls[control]("mem-1")
    assert malformed.value.field_errors == [
        {"path": "id", "message": "expected sch_N or proc_…, got 'mem-1'"}
    ]
    assert not ForgetLog.objects.exists()


def test_a_forgotten_procedure_is_not_offered_and_comes_back_on_unforget():
    scope = f"project:procedures-{timezone.now():%H%M%S%f}"
    opened = open_session(scope, "Deploy the staging environment")
    remember(scope, opened["session_id"], "Staging deploys go out on Tuesdays.")
    commit(
        opened["session_id"],
        procedure={
            "summary": "Deploy staging safely",
            "steps": [{"summary": "apply migrations"}, {"summary": "tag the release"}],
        },
    )
    procedure = Procedure.objects.get(scope=scope)
    ref = procedure.pk

    def offered() -> list[str]:
        found = retrieval(scope, "Deploy the staging environment safely")["procedures"]
        return [p["procedure_id"] for p in found]

    assert offered() == [ref]
    forgot = control_forget(ref=ref, reason="obsolete", actor="ann", now=timezone.now())
    assert (forgot.prior_status, forgot.new_status) == ("active", "forgotten")
    assert offered() == []

    back = control_unforget(ref=ref, actor="ann", now=timezone.now())
    assert back.new_status == "active" and offered() == [ref]
    actions = ForgetLog.objects.filter(procedure_id=ref).order_by("pk")
    assert [a.action for a in actions] == ["forget", "unforget"]
