"""One state of the vector tables for the several searches of one ranking.

A ranking searches a kind once per pool (the whole cue and each facet): sqlite-vec's copy of
a table (vec_mirror) checks for new rows before each search, one statement each. Inside
`one_reading()` a copy holding only committed rows checks once, on the ranking's first search
of it, and answers the others from what it then held: the same rows, unless another writer
committed during the ranking, whose rows the next ranking sees. A copy holding a write
transaction's provisional rows checks before every search, as outside.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_reading = threading.local()


@contextmanager
def one_reading() -> Iterator[None]:
    """The searches inside (in this thread) read the tables as the first of each found them."""
    if getattr(_reading, "read", None) is not None:  # nested: the outer reading holds
        yield
        return
    _reading.read = set()
    try:
        yield
    finally:
        _reading.read = None


def first_read(copy: object) -> bool:
    """Whether `copy` must check the table: always outside a reading, once inside one (the
    caller checks it now)."""
    read: set[int] | None = getattr(_reading, "read", None)
    if read is None:
        return True
    if id(copy) in read:
        return False
    read.add(id(copy))
    return True
