"""Hooks the code calls where operators' metrics are measured; by default they do nothing.

The app records through these three functions only: a finished tool or REST verb call
(`call_finished`), an embedding (`embedding_finished`), a worker pass (`pass_finished`). A
server process installs a `Sink` (slowave_site.metrics: Prometheus) at its start; until then,
and in processes that serve no `/metrics` at all (`mcp_serve`, one per agent window; CLI
commands), a hook is one attribute test, and the metrics library is never imported.
Does not live here: the metric names, the registry, the `/metrics` view (slowave_site.metrics).
"""

from __future__ import annotations

from typing import Protocol


class Sink(Protocol):
    def call_finished(self, *, surface: str, tool: str, code: str, seconds: float) -> None: ...

    def embedding_finished(self, *, texts: int, seconds: float) -> None: ...

    def pass_finished(self, *, name: str, status: str, seconds: float) -> None: ...


_sink: Sink | None = None


def install(sink: Sink | None) -> None:
    """Send every later measurement to `sink` (None: drop them again)."""
    global _sink
    _sink = sink


def installed() -> Sink | None:
    return _sink


def call_finished(*, surface: str, tool: str, code: str, seconds: float) -> None:
    """One MCP tool call or REST verb call answered: `code` is "ok" or the envelope's error
    code; `seconds` includes any wait for a free worker thread."""
    if _sink is not None:
        _sink.call_finished(surface=surface, tool=tool, code=code, seconds=seconds)


def embedding_finished(*, texts: int, seconds: float) -> None:
    if _sink is not None:
        _sink.embedding_finished(texts=texts, seconds=seconds)


def pass_finished(*, name: str, status: str, seconds: float) -> None:
    if _sink is not None:
        _sink.pass_finished(name=name, status=status, seconds=seconds)
