"""The envelope every reply travels in, over MCP and REST: `{"ok": true, "data": ...}` or
`{"ok": false, "error": {...}}` (memory.errors.ErrorDetail)."""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar

from typing_extensions import TypedDict

from memory.errors import ErrorDetail

DataT = TypeVar("DataT")


class Ok(TypedDict, Generic[DataT]):
    ok: Literal[True]
    data: DataT


class Failed(TypedDict):
    ok: Literal[False]
    error: ErrorDetail


Envelope = Ok[Any] | Failed
