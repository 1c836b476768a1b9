"""Hostile values for the fuzz tests, and the ids (`Pool`) they mix with.

Edge strings (control characters, lone surrogates, bidi overrides, combining marks, look-alike
digits, injection probes, scopes at and past their limits), strings at and one past every
length limit, timestamps out of range or malformed, numbers past 64 bits and non-finite,
unknown and malformed ids, wrong shapes (deep nesting, huge containers, NaN inside), and
random text and JSON from hypothesis. Nothing here talks to a server.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st


@dataclass
class Pool:
    """Real ids the fuzzer draws from, each with the scope it belongs to."""

    scope: str
    other_scope: str
    sessions: dict[str, str] = field(default_factory=dict)
    retrievals: dict[str, str] = field(default_factory=dict)
    memories: dict[str, str] = field(default_factory=dict)
    procedures: dict[str, str] = field(default_factory=dict)
    continuities: dict[str, str] = field(default_factory=dict)
    cursors: list[str] = field(default_factory=list)

    def all_ids(self) -> list[str]:
        return sorted(
            [*self.sessions, *self.retrievals, *self.memories, *self.procedures]
            + [*self.continuities, *self.cursors]
        )

    def learn(self, tool: str, arguments: Any, data: dict[str, Any]) -> None:
        """Keep the ids a successful call returned, for later calls to use."""
        scope = arguments.get("scope") if isinstance(arguments, dict) else None
        if tool == "slowave_activate" and isinstance(scope, str):
            self.sessions[data["session_id"]] = scope
            self.retrievals[data["retrieval_id"]] = scope
            self.continuities[data["continuity_id"]] = scope
        if tool == "slowave_recall" and isinstance(scope, str) and "retrieval_id" in data:
            self.retrievals[data["retrieval_id"]] = scope
        if tool == "slowave_remember" and isinstance(scope, str):
            for stored in [data, *(r.get("data") or {} for r in data.get("results", []))]:
                if isinstance(stored.get("memory_id"), str):
                    self.memories[stored["memory_id"]] = scope
        if isinstance(data.get("continue_from"), str):
            self.cursors.append(data["continue_from"])


def run_examples(count: int, example: Any) -> None:
    """Call `example(data)` for `count` reproducible draws (fixed seed, no example database,
    no deadline). No shrinking: the servers keep state between examples, so a smaller
    example would not replay the same; the checks record each failing call instead."""

    @settings(
        max_examples=count,
        deadline=None,
        derandomize=True,
        database=None,
        phases=(Phase.generate,),
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )
    @given(st.data())
    def run(data: st.DataObject) -> None:
        example(data)

    run()


def pick(ids: Iterable[str], fallback: str) -> st.SearchStrategy[str]:
    """One of `ids` (or `fallback` if there are none). The pool grows as calls succeed, and
    hypothesis requires the same choices to draw the same way: an index of fixed range, taken
    modulo the list's current length, keeps them stable."""
    frozen = sorted(ids) or [fallback]
    return st.integers(0, 2**16 - 1).map(lambda i: frozen[i % len(frozen)])


# --- the corpus -------------------------------------------------------------------------------

# fmt: off
LIMITS = (40, 41, 80, 81, 200, 201, 500, 501, 1000, 1001, 2000, 2001, 4000, 4001, 8000, 8001)
LIMITS += (20_000, 20_001)
UNITS = ("x", "é", "🙂", "\u200b", " ", "\u0301")
EDGE_STRINGS = (
    "", " ", "\t\n ", "\x00", "a\x00b", "\x7f", "\x1b[31m", "\u0085", "\u2028", "\ufeff",
    "\u202eevil", "\ud800", "\udfff", "cut \ud83d", "\U0001f642", "\uffff", "\U0010ffff",
    "e\u0301" * 50, "İı", "ß", "ǅ", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "null", "None", "NaN", "true", "0", "-1",
    "'\"\\", "%s%n%x", "{{x}}", "${jndi:ldap://x}", "<script>alert(1)</script>",
    "../../etc/passwd", "' OR 1=1; DROP TABLE memory_memory; --", "\\u0000", ":", "a:", ":b",
    "project: ", " project:x ", "project:\x00", "project:" + "x" * 193, "project:" + "x" * 192,
)
TIMESTAMPS = (
    "2024-01-01T00:00:00Z", "2024-01-01T00:00:00+00:00", "2024-01-01T00:00:00", "2024-01-01",
    "0001-01-01T00:00:00+14:00", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59-14:00",
    "9999-12-31T23:59:59Z", "10000-01-01T00:00:00Z", "2024-02-30T00:00:00Z",
    "2024-01-01T25:00:00Z", "2024-01-01T00:00:00+24:00", "2024-01-01T00:00:00.123456789Z",
    "2024-01-01t00:00:00z", "2024-01-01 00:00:00+01:00", "２０２４-01-01T00:00:00Z",
    "٢٠٢٤-٠١-٠١T00:00:00Z", "1e10", "-1", "now", "1970-01-01T00:00:00-00:01",
)
NUMBERS = (
    0, -1, 1, 2**31, 2**53 + 1, 2**63, 2**64, -(2**63) - 1, 10**30, 1.5, -0.0, 5e-324, 1e308,
    math.nan, math.inf, -math.inf, True, False,
)
UNKNOWN_IDS = (
    "sess_0000000000000000", "sess_", "sess_\x00", "ctx_000000000000", "rec_000000000000",
    "sch_0", "sch_-1", "sch_1.5", "sch_１", "sch_99999999999999999999", "sch_" + "9" * 400,
    "proc_sess_0000000000000000", "proc_", "cur_0000", "cur_" + "0" * 40, "cont_" + "A" * 32,
    "cont_" + "A" * 97, "sch_1", "1", "%2F", "a/b", "..", "sch_" + "9" * 4301,
    "sch_" + "0" * 30 + "1",
)
# fmt: on


def deep_list(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


def deep_dict(depth: int) -> Any:
    value: Any = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


# fmt: off
SHAPES = (
    None, [], {}, [None], {"": None}, {"a": math.nan}, {"a": [math.inf]}, [1, "a", None],
    {"$ne": ""}, {"__proto__": {"x": 1}}, deep_list(6), deep_dict(6), deep_list(70),
    deep_dict(70), {f"k{i}": i for i in range(200)}, ["x"] * 300, {"k": "x" * 17_000},
)
# fmt: on

TEXT = st.text(
    alphabet=st.one_of(
        st.characters(),
        st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
        st.sampled_from(["\x00", "\u2028", "\ufeff", "\u0301", "\n", '"', "\\"]),
    ),
    max_size=40,
)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=4),
    max_leaves=10,
)


def huge_strings() -> st.SearchStrategy[str]:
    return st.builds(lambda n, unit: unit * n, st.sampled_from(LIMITS), st.sampled_from(UNITS))


def hostile_values(pool: Pool) -> st.SearchStrategy[Any]:
    """Any value a field might be sent: edge constants, real ids of any kind and scope, random
    JSON and text."""
    return st.one_of(
        st.sampled_from(EDGE_STRINGS),
        st.sampled_from(TIMESTAMPS),
        st.sampled_from(NUMBERS),
        st.sampled_from(UNKNOWN_IDS),
        pick(pool.all_ids(), "sess_x"),
        st.sampled_from([pool.scope, pool.other_scope]),
        st.sampled_from(SHAPES),
        huge_strings(),
        st.integers(),
        st.floats(),
        TEXT,
        _json,
    )


# fmt: off
# A few values for every field, in the sweep (tests/fuzz/bodies.py).
SWEEP_VALUES = (
    None, -1, 2**64, math.nan, "", "\x00", "\ud800", "x" * 20_001, [], deep_dict(70),
)
# fmt: on
