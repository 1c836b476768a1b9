"""The loop both MCP fuzz tests run, over HTTP (tests/api/test_fuzz_surfaces.py) and over
stdio (tests/mcp_bridge/test_fuzz_stdio.py): draw a frame, send it, learn the ids it made.

Eight frames in ten are tools/call frames around fuzzed arguments, the rest hostile frames
(fuzzed id, method or params); one in six is written as raw UTF-8 (lone surrogates as invalid
bytes), one in twelve is corrupted on the wire. Ids from ok replies join the pool, so later
calls aim at real sessions and retrievals.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from tests.fuzz import bodies, wire
from tests.fuzz.values import Pool, run_examples


@dataclass(frozen=True)
class Drawn:
    frame: Any  # what the line encodes (before any corruption)
    tool: str | None  # the tool a tools/call frame names
    line: bytes  # what goes on the wire
    corrupted: bool


def draw_frame(data: st.DataObject, pool: Pool, request_id: int) -> Drawn:
    tool: str | None = None
    if data.draw(st.integers(0, 9)) < 8:
        frame, tool = data.draw(wire.call_frames(pool, request_id))
    else:
        frame = data.draw(wire.hostile_frames(pool, request_id))
    line = wire.encoded(frame, raw_utf8=data.draw(st.integers(0, 5)) == 0)
    corrupted = data.draw(st.integers(0, 11)) == 0
    if corrupted:
        line = data.draw(wire.corrupted(line))
    return Drawn(frame, tool, line, corrupted)


def run_frame_examples(
    count: int,
    *,
    pool: Pool,
    next_id: Callable[[], int],
    exchange: Callable[[st.DataObject, Drawn], list[Any]],
) -> None:
    """`count` reproducible examples; `exchange` sends one (it may draw more, e.g. headers)
    and returns the structuredContent of each tools/call result it got back."""

    def example(data: st.DataObject) -> None:
        drawn = draw_frame(data, pool, next_id())
        for envelope in exchange(data, drawn):
            if drawn.tool in bodies.TOOLS and isinstance(envelope, dict) and envelope.get("ok"):
                pool.learn(drawn.tool, drawn.frame["params"]["arguments"], envelope["data"])

    run_examples(count, example)
