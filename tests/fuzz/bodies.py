"""Fuzzed tool calls: a valid body from real ids, then hostile mutations; and the sweep.

A tool call is a valid body built from real ids (`Pool`), then 0-3 mutations: a field set to a
hostile value (tests/fuzz/values.py), a field dropped, an unknown field added, a list grown
past its limit, or the whole body replaced. About one call in six stays valid, so sequences
mix real writes with refused calls against the sessions they opened. The sweep is the
systematic counterpart: each member of a full body dropped, or set to each of a few values.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from tests.fuzz.values import SWEEP_VALUES, TEXT, Pool, hostile_values, pick

TOOLS = ("slowave_activate", "slowave_remember", "slowave_recall", "slowave_feedback")
TOOLS += ("slowave_commit",)
VERIFIED = {"status": "verified", "summary": "checked by the fuzz test"}
MISSING = object()  # a mutation's "drop this field"

WORDS = st.sampled_from(
    [
        "The deploy pipeline runs on Fridays",
        "Use pnpm, not npm, in the web package",
        "Checkout retries payments three times",
        "the release notes live in docs/CHANGES.md",
        "why does the cache miss on cold start",
    ]
)
MEMORY_TYPES = st.sampled_from(["fact", "preference", "decision", "constraint", "lesson"])
CONTEXT = st.fixed_dictionaries(
    {"repo": st.just("checkout"), "files": st.just(["a.py", "b.py"])},
    optional={"depth": st.just({"a": {"b": {"c": 1}}}), "n": st.integers(0, 9)},
)


@st.composite
def _activate(draw: st.DrawFn, pool: Pool) -> dict[str, Any]:
    body = {
        "task": draw(WORDS),
        "initial_goal": draw(WORDS),
        "scope": draw(st.sampled_from([pool.scope, pool.other_scope])),
    }
    if draw(st.booleans()):
        body["continuity_id"] = draw(pick(pool.continuities, "cont_" + "B" * 40))
    if draw(st.booleans()):
        body["task_context"] = draw(CONTEXT)
    if draw(st.booleans()):
        body["semantic_context"] = draw(WORDS)
    return body


def _session_and_scope(draw: st.DrawFn, pool: Pool) -> dict[str, str]:
    session = draw(pick(pool.sessions, "sess_0000000000000000"))
    own = pool.sessions.get(session, pool.scope)
    other = pool.other_scope if own == pool.scope else pool.scope
    # Mostly the session's own scope; sometimes another scope's (must be refused).
    scope = draw(st.sampled_from([own, own, own, other]))
    return {"session_id": session, "scope": scope}


@st.composite
def _remember(draw: st.DrawFn, pool: Pool) -> dict[str, Any]:
    body: dict[str, Any] = _session_and_scope(draw, pool)
    item = st.fixed_dictionaries(
        {"content": WORDS, "type": MEMORY_TYPES},
        optional={"occurred_at": st.just("2024-05-01T10:00:00+02:00")},
    )
    if draw(st.booleans()):
        body["memories"] = draw(st.lists(item, min_size=1, max_size=3))
    else:
        body.update(draw(item))
    return body


@st.composite
def _recall(draw: st.DrawFn, pool: Pool) -> dict[str, Any]:
    body: dict[str, Any] = _session_and_scope(draw, pool)
    if draw(st.integers(0, 4)) == 0:
        body["continue_from"] = draw(pick(pool.cursors, "cur_" + "0" * 16))
        return body
    body["query"] = draw(WORDS)
    if draw(st.booleans()):
        body["task_context"] = draw(CONTEXT)
    if draw(st.booleans()):
        body["semantic_context"] = draw(WORDS)
    if draw(st.booleans()):
        body["evidence"] = draw(st.sampled_from(["references", "full"]))
    return body


@st.composite
def _feedback_record(draw: st.DrawFn, pool: Pool) -> dict[str, Any]:
    body: dict[str, Any] = {"retrieval_id": draw(pick(pool.retrievals, "ctx_000000000000"))}
    memory = pick(pool.memories, "sch_1")
    entries = st.one_of(
        st.fixed_dictionaries({"memory_id": memory, "assessment": st.just("irrelevant")}),
        st.fixed_dictionaries(
            {"memory_id": memory, "assessment": st.just("used")},
            optional={"effect": st.sampled_from(["helped", "no_effect", "harmed"])},
        ),
        st.fixed_dictionaries(
            {
                "memory_id": memory,
                "assessment": st.just("stale"),
                "stale_reason": st.sampled_from(["outdated", "superseded", "contradicted"]),
                "reason": WORDS,
            },
            optional={"replacement_memory_id": memory},
        ),
    )
    if draw(st.booleans()):
        body["memory_feedback"] = draw(st.lists(entries, max_size=3))
    if draw(st.booleans()):
        procedure = pick(pool.procedures, "proc_x")
        body["procedure_feedback"] = [
            draw(
                st.fixed_dictionaries(
                    {"procedure_id": procedure, "use": st.sampled_from(["used", "not_used"])},
                    optional={"contribution": WORDS, "effect": st.just("helped")},
                )
            )
        ]
    if draw(st.booleans()):
        body["missing"] = draw(st.lists(WORDS, max_size=2))
    if draw(st.booleans()):
        body["coverage"] = draw(st.sampled_from(["partial", "complete"]))
    return body


@st.composite
def _feedback(draw: st.DrawFn, pool: Pool) -> dict[str, Any]:
    if draw(st.integers(0, 3)) == 0:
        return {"items": draw(st.lists(_feedback_record(pool), min_size=1, max_size=3))}
    return draw(_feedback_record(pool))


@st.composite
def _commit(draw: st.DrawFn, pool: Pool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "session_id": draw(pick(pool.sessions, "sess_0000000000000000")),
        "final_goal": draw(WORDS),
        "outcome": draw(st.sampled_from(["success", "partial", "failure"])),
        "outcome_summary": draw(WORDS),
        "verification": {**VERIFIED, "evidence_refs": ["ci:green"]},
    }
    if draw(st.booleans()):
        body["procedure"] = {
            "summary": draw(WORDS),
            "steps": [{"summary": draw(WORDS)}, {"summary": "run the tests"}],
            "caveats": ["not on Fridays"],
            "context": {"repo": "checkout"},
            "deduplication_key": draw(st.sampled_from(["deploy.friday", "fuzz:key"])),
        }
    if draw(st.booleans()):
        body["trajectory"] = [{"kind": "action", "summary": "ran it", "status": "succeeded"}]
    return body


TEMPLATES = {
    "slowave_activate": _activate,
    "slowave_remember": _remember,
    "slowave_recall": _recall,
    "slowave_feedback": _feedback,
    "slowave_commit": _commit,
}


# --- mutations --------------------------------------------------------------------------------

Path = tuple[str | int, ...]


def paths_of(value: Any, prefix: Path = (), depth: int = 4) -> list[Path]:
    """Every key and index of `value` down to `depth` levels."""
    found: list[Path] = []
    if depth == 0:
        return found
    items: list[tuple[str | int, Any]]
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        items = list(enumerate(value))
    else:
        return found
    for key, child in items:
        found.append((*prefix, key))
        found += paths_of(child, (*prefix, key), depth - 1)
    return found


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def replaced(body: Any, path: Path, value: Any) -> Any:
    """`body` with the member at `path` set to `value`, or removed when `value` is MISSING."""
    if not path:
        return value
    out = _copy(body)
    parent = out
    for key in path[:-1]:
        parent = parent[key]
    if value is MISSING:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return out


@st.composite
def mutated(draw: st.DrawFn, body: Any, pool: Pool) -> Any:
    paths = paths_of(body)
    kind = draw(st.sampled_from(["set"] * 5 + ["drop", "extra", "grow", "whole"]))
    if kind == "whole" or not paths:
        return draw(hostile_values(pool))
    if kind == "extra":
        containers = [p for p in [(), *paths] if isinstance(_at(body, p), dict)]
        if not containers:
            return body
        where = draw(st.sampled_from(containers))
        key = draw(st.sampled_from(["limit", "id", "", "scope ", "Task", "\ud800"]) | TEXT)
        if key in _at(body, where):
            return body
        return replaced(body, (*where, key), draw(hostile_values(pool)))
    if kind == "grow":
        lists = [p for p in paths if isinstance(_at(body, p), list) and _at(body, p)]
        if not lists:
            return body
        where = draw(st.sampled_from(lists))
        size = draw(st.sampled_from([32, 33, 64, 65, 256, 257, 1000]))
        return replaced(body, where, [_at(body, where)[0]] * size)
    where = draw(st.sampled_from(paths))
    if kind == "drop":
        return replaced(body, where, MISSING)
    return replaced(body, where, draw(hostile_values(pool)))


def _at(body: Any, path: Path) -> Any:
    for key in path:
        body = body[key]
    return body


@st.composite
def tool_arguments(draw: st.DrawFn, tool: str, pool: Pool) -> Any:
    body = draw(TEMPLATES[tool](pool))
    for _ in range(draw(st.sampled_from([0, 1, 1, 1, 2, 3]))):
        body = draw(mutated(body, pool))
    return body


@st.composite
def tool_calls(draw: st.DrawFn, pool: Pool) -> tuple[str, Any]:
    tool = draw(st.sampled_from(TOOLS))
    return tool, draw(tool_arguments(tool, pool))


# --- the sweep -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """The real ids a sweep's bodies name (tests/fuzz/seed.py makes them): an open session, its
    continuity, a recall in it that showed memories (two of them here) and returned a cursor,
    and a procedure."""

    session: str
    scope: str
    continuity: str
    retrieval: str
    memories: tuple[str, str]
    cursor: str
    procedure: str


def full_bodies(target: Target) -> list[tuple[str, dict[str, Any]]]:
    """One body per tool and form with every optional field present, on real ids."""
    session, scope, retrieval = target.session, target.scope, target.retrieval
    context = {"repo": "checkout", "files": ["a.py"]}
    when = "2024-05-01T10:00:00+02:00"
    stale = {
        "memory_id": target.memories[0],
        "assessment": "stale",
        "relevance": "relevant",
        "stale_reason": "superseded",
        "replacement_memory_id": target.memories[1],
        "reason": "replaced",
    }
    used = {"procedure_id": target.procedure, "use": "used", "effect": "helped"}
    used |= {"contribution": "it worked", "reason": "r"}
    procedure_body = {
        "version": 2,
        "goal": "g",
        "summary": "s",
        "context": context,
        "steps": [{"summary": "one"}],
        "caveats": ["c"],
        "deduplication_key": "fuzz.sweep",
    }
    return [
        (
            "slowave_activate",
            {
                "task": "sweep",
                "initial_goal": "g",
                "scope": scope,
                "continuity_id": target.continuity,
                "task_context": context,
                "semantic_context": "s",
            },
        ),
        (
            "slowave_remember",
            {
                "scope": scope,
                "session_id": session,
                "content": "c",
                "type": "fact",
                "occurred_at": when,
            },
        ),
        (
            "slowave_remember",
            {
                "scope": scope,
                "session_id": session,
                "memories": [{"content": "c", "type": "fact", "occurred_at": when}],
            },
        ),
        (
            "slowave_recall",
            {
                "session_id": session,
                "scope": scope,
                "query": "q",
                "task_context": context,
                "semantic_context": "s",
                "evidence": "full",
            },
        ),
        ("slowave_recall", {"session_id": session, "scope": scope, "continue_from": target.cursor}),
        (
            "slowave_feedback",
            {
                "retrieval_id": retrieval,
                "memory_feedback": [stale],
                "procedure_feedback": [used],
                "retrieval_quality": "good",
                "missing": ["m"],
                "coverage": "partial",
            },
        ),
        (
            "slowave_feedback",
            {
                "items": [
                    {"retrieval_id": retrieval, "memory_feedback": [stale], "coverage": "partial"}
                ]
            },
        ),
        (
            "slowave_commit",
            {
                "session_id": session,
                "final_goal": "g",
                "outcome": "success",
                "outcome_summary": "s",
                "verification": {**VERIFIED, "evidence_refs": ["ci"]},
                "procedure": procedure_body,
                "trajectory": [{"kind": "action", "summary": "s", "status": "succeeded"}],
            },
        ),
    ]


def sweep(target: Target) -> Iterator[tuple[str, Any]]:
    """Each full body with one member dropped, or set to each of SWEEP_VALUES; and each
    container given an unknown member."""
    for tool, body in full_bodies(target):
        paths = paths_of(body, depth=6)
        for path in paths:
            yield tool, replaced(body, path, MISSING)
            for value in SWEEP_VALUES:
                yield tool, replaced(body, path, value)
        for path in [(), *(p for p in paths if isinstance(_at(body, p), dict))]:
            yield tool, replaced(body, (*path, "unknown"), 1)
