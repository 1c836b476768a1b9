"""A cue's size is bounded: past a field's limit the call is refused naming the field and the
limit; the longest cue allowed is answered with bounded work and leaves no memory behind.

Issue 16.7: a 20,000-character task cost seconds of CPU and kept hundreds of MB (measured over
HTTP, tests/api/test_heavy_calls.py), and a recall's task_context, merged into the session's,
could grow the cue of every later recall of the session without bound.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

from tests.acceptance.cycle import activate, err, fresh_scope, ok, remember_many

CONTEXT_KEYS = 60  # x 250 characters: close to task_context's 16 KiB


def _words(seed: int, n: int) -> str:
    rng = random.Random(seed)
    vocabulary = "billing queue retry deploy cache invoice payment schema report worker".split()
    return " ".join(f"{rng.choice(vocabulary)}{rng.randrange(500)}" for _ in range(n))


def _longest_cue(scope: str, seed: int) -> dict:
    """Every cue field at (or just under) its limit, the task in many long lines."""
    lines, size = [], 0
    while size < 19_000:
        lines.append(_words(seed + len(lines), 40))
        size += len(lines[-1]) + 1
    context = {f"key{i}": _words(seed + 1000 + i, 30)[:250] for i in range(CONTEXT_KEYS)}
    assert len(json.dumps(context).encode()) < 16 * 1024
    return {
        "scope": scope,
        "task": "\n".join(lines)[:20_000],
        "initial_goal": _words(seed + 1, 400)[:2_000],
        "semantic_context": _words(seed + 2, 800)[:4_000],
        "task_context": context,
    }


def _rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) / 1024


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_it_refuses_a_task_over_its_limit_naming_the_field_and_the_limit(mcp) -> None:
    args = {"task": "word " * 4_001, "initial_goal": "g", "scope": fresh_scope()}
    error = err(mcp.call("slowave_activate", args))
    assert error["field_errors"][0]["path"] == "task"
    assert "20000" in error["field_errors"][0]["message"], error


def test_it_refuses_a_recall_context_that_would_grow_the_session_past_16_kib(mcp) -> None:
    scope = fresh_scope("context")
    first = {f"a{i}": "x" * 200 for i in range(50)}  # ~11 KiB, kept by the session
    opened = activate(mcp, scope, "Grow the context", task_context=first)
    more = {f"b{i}": "y" * 200 for i in range(30)}  # ~6.5 KiB more: fine alone, not merged
    call = {"session_id": opened["session_id"], "scope": scope, "query": "what is kept?"}
    error = err(mcp.call("slowave_recall", {**call, "task_context": more}))
    assert error["field_errors"][0]["path"] == "task_context"
    assert "16 KiB" in error["message"], error
    # Nothing was merged, and the session answers a recall that keeps within the limit.
    ok(mcp.call("slowave_recall", {**call, "task_context": {"b0": "small"}}))
    ok(mcp.call("slowave_recall", call))


def test_it_answers_the_longest_allowed_cue_with_bounded_work_and_memory(mcp) -> None:
    scope = fresh_scope("heavy")
    opened = activate(mcp, scope, "Seed the heavy-cue scope")  # the model is loaded by now
    remember_many(mcp, scope, opened["session_id"], [_words(i, 20) for i in range(40)])
    before_rss = _rss_mb(mcp.pid)
    for seed in range(3):
        cpu = _cpu_seconds(mcp.pid)
        data = ok(mcp.call("slowave_activate", _longest_cue(scope, seed * 7919)))
        # ~2-3 s of CPU on two cores: 33 facets of at most 256 tokens, the first 8,000
        # characters' terms; a generous bound, for a loaded machine.
        assert _cpu_seconds(mcp.pid) - cpu < 60
        assert data["catalog_truncated"] is True  # more than 32 facets, cue past what is read
    # What the model's batches took is handed back after each cue.
    assert _rss_mb(mcp.pid) - before_rss < 100
