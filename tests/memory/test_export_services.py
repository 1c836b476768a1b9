"""Export and import services (memory/services/export.py, export_load.py) on the real database:
an export holds one scope's rows and nothing derived; importing it into a store without those
rows gives back the same export; a store that has them, or a file that is not an export, is
refused with nothing written."""

from __future__ import annotations

import json

import pytest
from django.db import transaction
from django.utils import timezone

from memory.errors import InvalidInput
from memory.models import ForgetLog, Memory, Session
from memory.schemas import FeedbackIn
from memory.services.export import export_scopes, scopes_export
from memory.services.export_load import export_import
from memory.services.feedback import feedback_submit
from memory.services.forgetting import memory_forget
from tests.factories import commit, fresh_scope, remember, retrieval, seeded_scope

pytestmark = pytest.mark.django_db

FACTS = (
    "Invoices are generated on the first day of each month.",
    "The office plants are watered on Fridays.",
    "Staging deploys need database migrations before the release tag.",
)


def _seed(scope: str) -> list[str]:
    """Memories, a retrieval with feedback, a forgotten memory, a committed procedure."""
    _, ids = seeded_scope(*FACTS, scope=scope)
    shown = retrieval(scope, "When are invoices generated each month?")
    feedback_submit(
        data=FeedbackIn(
            retrieval_id=shown["retrieval_id"],
            memory_feedback=[
                {"memory_id": m["memory_id"], "assessment": "used"} for m in shown["memories"]
            ],
            coverage="complete",
        ),
        now=timezone.now(),
    )
    commit(
        shown["session_id"],
        procedure={"summary": "Send invoices", "steps": [{"summary": "generate them"}]},
    )
    memory_forget(memory_id=ids[1], reason="not ours", actor="ann", now=timezone.now())
    return ids


def _export(*scopes: str) -> list[str]:
    return list(scopes_export(scopes=list(scopes), now=timezone.now()))


def _records(lines: list[str]) -> list[dict]:
    return [json.loads(line) for line in lines]


def _without_time(lines: list[str]) -> list[str]:
    header = json.loads(lines[0])
    header.pop("exported_at")
    return [json.dumps(header), *lines[1:]]


def test_an_export_holds_the_scope_and_nothing_derived():
    scope, other = fresh_scope(), fresh_scope()
    ids = _seed(scope)
    seeded_scope("Other teams deploy on Mondays.", scope=other)

    records = _records(_export(scope))

    header, rest = records[0], records[1:]
    assert (header["record"], header["format"], header["version"]) == (
        "header",
        "slowave-export",
        1,
    )
    assert header["scopes"] == [scope]
    kinds = {r["record"] for r in rest}
    assert {"session", "memory", "retrieval", "feedback", "procedure", "forget_log"} <= kinds
    memories = [r for r in rest if r["record"] == "memory"]
    assert [f"sch_{m['id']}" for m in memories] == ids
    assert {m["scope"] for m in memories} == {scope}
    assert [m["status"] for m in memories] == ["active", "forgotten", "active"]
    for memory in memories:
        assert not {"embedding", "embedded_at", "passages", "passages_complete"} & set(memory)
    sessions = [r for r in rest if r["record"] == "session" and not r.get("stub")]
    assert {s["scope"] for s in sessions} == {scope}
    (forgot,) = [r for r in rest if r["record"] == "forget_log"]
    assert (forgot["action"], forgot["reason"]) == ("forget", "not ours")


def test_two_exports_differ_only_in_their_time():
    scope = fresh_scope()
    _seed(scope)

    assert _without_time(_export(scope)) == _without_time(_export(scope))


def test_export_then_import_into_a_store_without_the_scope_gives_the_same_export():
    scope = fresh_scope()
    # The rows are made inside a savepoint, exported, then rolled back: the store no longer
    # has them (index tables included), as an empty store would not.
    before = transaction.savepoint()
    _seed(scope)
    first = _export(scope)
    transaction.savepoint_rollback(before)
    assert not Memory.objects.filter(scope=scope).exists()

    report = export_import(lines=first, now=timezone.now())

    assert report["imported"]["Memory"] == len(FACTS)
    assert report["imported"]["ForgetLog"] == 1
    assert _without_time(_export(scope)) == _without_time(first)
    # Imported memories are searchable again: the import re-indexed and re-embedded them.
    found = retrieval(scope, "When are invoices generated each month?")["memories"]
    assert [m["content"] for m in found][:1] == [FACTS[0]]


def test_importing_into_a_store_that_has_the_rows_is_refused_and_writes_nothing():
    scope = fresh_scope()
    _seed(scope)
    lines = _export(scope)
    counts = (Memory.objects.count(), Session.objects.count(), ForgetLog.objects.count())

    with pytest.raises(InvalidInput, match="already in use"):
        export_import(lines=lines, now=timezone.now())

    assert (Memory.objects.count(), Session.objects.count(), ForgetLog.objects.count()) == counts


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([], "line 1: the file is empty"),
        (['{"record": "memory"}'], "line 1: not a Slowave export"),
        (['{"record":"header","format":"slowave-export","version":9}'], "version 9"),
        (['{"record":"header","format":"slowave-export","version":1}', "{nope"], "line 2"),
        (
            ['{"record":"header","format":"slowave-export","version":1}', '{"record":"x"}'],
            "line 2: unknown record 'x'",
        ),
    ],
)
def test_a_file_that_is_not_an_export_is_refused_by_line(lines, message):
    scope, _ = seeded_scope(FACTS[0])
    before = Memory.objects.count()

    with pytest.raises(InvalidInput, match=message):
        export_import(lines=lines, now=timezone.now())

    assert Memory.objects.count() == before


@pytest.mark.parametrize(
    ("field", "value"),
    [("id", "\u0301\u0301"), ("id", "seven"), ("superseded_by_id", "x")],
)
def test_an_id_that_is_not_a_whole_number_is_refused_by_line(field, value):
    scope = fresh_scope()
    before = transaction.savepoint()
    _seed(scope)
    lines = _export(scope)
    transaction.savepoint_rollback(before)
    at = next(i for i, line in enumerate(lines) if json.loads(line)["record"] == "memory")
    row = json.loads(lines[at])
    row[field] = value
    lines[at] = json.dumps(row)

    with pytest.raises(InvalidInput, match=f"line {at + 1}: malformed memory record"):
        export_import(lines=lines, now=timezone.now())

    assert not Memory.objects.filter(scope=scope).exists()


def test_export_scopes_checks_the_names_it_is_given(scope, session):
    other = fresh_scope()
    remember(scope, session["session_id"], FACTS[0])
    seeded_scope(FACTS[1], scope=other)

    assert export_scopes(scopes=[other, scope, scope]) == sorted({scope, other})
    assert {scope, other} <= set(export_scopes(scopes=None, everything=True))
    with pytest.raises(InvalidInput) as none:
        export_scopes(scopes=[])
    assert none.value.field_errors[0]["path"] == "scope"
    with pytest.raises(InvalidInput) as bad:
        export_scopes(scopes=["not a scope"])
    assert bad.value.field_errors[0]["path"] == "scope"
