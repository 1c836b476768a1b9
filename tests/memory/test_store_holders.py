"""The store's registry of users: what lets `slowave restore` refuse to pull the store from
under a running process (issue 16). Locks on real files beside the real test database."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.db import connection

from memory.errors import StorageBusy
from memory.services.holders import holders_directory, store_exclusive, store_hold, store_holders

pytestmark = pytest.mark.django_db


def _database() -> Path:
    return Path(connection.settings_dict["NAME"])


def test_it_refuses_the_store_while_a_process_holds_it_and_names_that_process():
    with store_hold(role="slowave up"):
        [info] = store_holders(database=_database())
        assert (info["pid"], info["role"]) == (os.getpid(), "slowave up")
        with pytest.raises(StorageBusy) as refused, store_exclusive(database=_database()):
            pass
    assert f"pid {os.getpid()} (slowave up" in refused.value.message
    assert f"`kill {os.getpid()}`" in refused.value.message
    with store_exclusive(database=_database()):  # released with the block
        assert store_holders(database=_database()) == []
    assert not holders_directory(_database()).exists()  # the last one out leaves nothing behind


def test_it_sweeps_the_note_of_a_process_that_died_without_cleaning_up():
    stale = holders_directory(_database()) / "999999-deadbeef.json"
    stale.parent.mkdir(exist_ok=True)
    stale.write_text('{"pid": 999999, "role": "slowave up"}')  # nobody holds its lock
    with store_exclusive(database=_database()):
        assert not stale.exists()
    assert not stale.parent.exists()
