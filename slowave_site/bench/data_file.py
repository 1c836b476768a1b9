"""Reading a benchmark's JSON data file: a list of records, each parsed or named in one error."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def load_records(
    path: str | Path, *, layout: str, noun: str, parse: Callable[[Any], T], single: bool = False
) -> list[T]:
    """Every record of a JSON list in file order (`single`: a lone object counts as one),
    or a ValueError naming the file, the record and what was wrong with it."""
    with open(path, encoding="utf-8") as handle:
        try:
            data = json.load(handle)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not valid JSON ({exc})") from exc
    if single and isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise ValueError(f"{path}: not a {layout}-layout file (expected a list of {noun}s)")
    out: list[T] = []
    for position, raw in enumerate(data):
        try:
            out.append(parse(raw))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            # One message naming the record beats a bare KeyError from deep inside parsing.
            raise ValueError(
                f"{path}: {noun} {position} is not in {layout} layout ({type(exc).__name__}: {exc})"
            ) from exc
    return out
