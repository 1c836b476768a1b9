"""Write transactions of one process take turns in the SQLite backend (slowave_site.db): a
thread whose write would find the file locked waits for the turn, not in SQLite's busy handler,
and every way a transaction ends hands the turn on."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import OperationalError, connection, transaction

from memory.models import Continuity

committing = pytest.mark.django_db(transaction=True)
HOLD_SECONDS = 0.3


def _row(pk: str) -> None:
    Continuity.objects.create(id=pk, scope="project:turn", created_at=_now(), last_seen_at=_now())


def _now():
    from django.utils import timezone

    return timezone.now()


def _in_thread(func) -> dict:
    """Run `func` in a thread with its own connection; returns what it raised or returned."""
    out: dict = {}

    def run() -> None:
        try:
            out["value"] = func()
        except Exception as exc:
            out["error"] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    out["thread"] = thread
    return out


def _holding(pk: str, entered: threading.Event, *, fail: bool = False) -> None:
    with transaction.atomic():
        _row(pk)
        entered.set()
        time.sleep(HOLD_SECONDS)
        if fail:
            raise RuntimeError("the first writer fails")


def _second_writer(pk: str, entered: threading.Event, *, timeout: float | None = None):
    entered.wait()
    if timeout is not None:
        connection.ensure_connection()
        connection.settings_dict["OPTIONS"] = {**connection.settings_dict["OPTIONS"]}
        connection.settings_dict["OPTIONS"]["timeout"] = timeout
    # SQLite's own wait is off: only the turn can make this writer wait for the first.
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA busy_timeout = 0")
    started = time.perf_counter()
    with transaction.atomic():
        _row(pk)
    return time.perf_counter() - started


@committing
def test_it_queues_a_second_writer_until_the_first_commits():
    entered = threading.Event()
    first = _in_thread(lambda: _holding("ctn_first", entered))
    second = _in_thread(lambda: _second_writer("ctn_second", entered))
    first["thread"].join()
    second["thread"].join()
    assert "error" not in first and "error" not in second, second.get("error")
    assert second["value"] >= HOLD_SECONDS / 2  # it waited for the first one's commit
    assert set(Continuity.objects.values_list("pk", flat=True)) == {"ctn_first", "ctn_second"}


@committing
def test_it_hands_the_turn_on_when_a_transaction_rolls_back():
    entered = threading.Event()
    first = _in_thread(lambda: _holding("ctn_first", entered, fail=True))
    second = _in_thread(lambda: _second_writer("ctn_second", entered))
    first["thread"].join()
    second["thread"].join()
    assert isinstance(first.get("error"), RuntimeError)
    assert "error" not in second, second.get("error")
    assert list(Continuity.objects.values_list("pk", flat=True)) == ["ctn_second"]


@committing
def test_it_says_the_database_is_locked_when_the_turn_does_not_come_in_time():
    entered = threading.Event()
    first = _in_thread(lambda: _holding("ctn_first", entered))
    second = _in_thread(lambda: _second_writer("ctn_second", entered, timeout=0.05))
    first["thread"].join()
    second["thread"].join()
    assert isinstance(second.get("error"), OperationalError)
    assert "database is locked" in str(second["error"])
    # The turn is free again: this thread writes at once.
    with transaction.atomic():
        _row("ctn_third")
    assert set(Continuity.objects.values_list("pk", flat=True)) == {"ctn_first", "ctn_third"}
