"""`Out`, the base of every reply model (see memory/api/schemas/__init__.py)."""

from __future__ import annotations

from typing import Any

from ninja import Schema
from pydantic import ConfigDict


def _absent_is_not_null(schema: dict[str, Any], model: type) -> None:
    # A field defaulting to None is a key the service leaves out, never one it sends as null:
    # drop the `"default": null` pydantic would advertise (nullable fields have no default).
    for prop in schema.get("properties", {}).values():
        if "default" in prop and prop["default"] is None:
            del prop["default"]


# The default of a key the service may leave out. It is None at runtime; typing it Any lets
# `key: str = ABSENT` type-check while the field stays documented as `str`, not as nullable
# (`str | None` would add `null` to the OpenAPI schema).
ABSENT: Any = None


class Out(Schema):
    model_config = ConfigDict(extra="forbid", json_schema_extra=_absent_is_not_null)
