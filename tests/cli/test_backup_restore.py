"""backup during concurrent writes, rotation, and restore's refusals (spec §11)."""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pysqlite3.dbapi2 as sqlite

from memory.services.backup import backup_rotate, integrity_check
from tests.cli.conftest import SCOPE
from tests.cli.runner import REPO_ROOT, cli_env, run_python, slowave

# An agent writing as fast as it can: up to 40 batches of remembers, bounded in count and time.
WRITER = """
import django, os, time
os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'slowave_site.settings'); django.setup()
from django.utils import timezone
from memory.schemas import ActivateIn, RememberIn
from memory.services.activate import session_activate
from memory.services.remember import memory_remember
from memory.services.sessions import ClientInfo
s = session_activate(data=ActivateIn(task='bulk', initial_goal='g', scope='project:writer'),
                     client=ClientInfo(), now=timezone.now())
print('started', flush=True)
deadline = time.monotonic() + 8
for batch in range(40):
    if time.monotonic() > deadline:
        break
    memory_remember(data=RememberIn(scope='project:writer', session_id=s['session_id'], memories=[
        {'content': f'writer fact {batch}-{i} about subsystem {i * 7 + batch}', 'type': 'fact'}
        for i in range(10)]), now=timezone.now())
print('done', flush=True)
"""


def _unpack(backup: Path, into: Path) -> Path:
    target = into / (backup.name + ".sqlite3")
    with gzip.open(backup, "rb") as src, target.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return target


def _count(db: Path, sql: str) -> int:
    conn = sqlite.connect(str(db))
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


def test_it_backs_up_consistently_while_an_agent_writes(
    home: Path, seeded: dict[str, Any], tmp_path: Path
) -> None:
    backups = tmp_path / "backups"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER],
        cwd=REPO_ROOT,
        env=cli_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "started"
        made = [
            slowave(home, "--json", "backup", "--dir", str(backups), "--keep", "2")
            for _ in range(3)
        ]
    finally:
        writer.wait(timeout=60)
    assert writer.returncode == 0, writer.stderr.read() if writer.stderr else ""
    assert all(r.code == 0 for r in made), [r.err for r in made]
    kept = sorted(backups.glob("slowave-*.sqlite3.gz"))
    assert [p.name for p in kept] == sorted(Path(r.json()["data"]["path"]).name for r in made[1:])
    assert not [p for p in backups.iterdir() if p.name.startswith(".")]  # no temporaries left
    for backup in kept:
        db = _unpack(backup, tmp_path)
        assert integrity_check(db) == "ok"
        assert _count(db, f"SELECT count(*) FROM memory_memory WHERE scope = '{SCOPE}'") == 4


def test_it_refuses_a_keep_below_one_and_writes_nothing(home: Path, tmp_path: Path) -> None:
    result = slowave(home, "backup", "--dir", str(tmp_path / "none"), "--keep", "0")
    assert result.code == 1 and "keep must be at least 1" in result.err
    assert not (tmp_path / "none").exists() or not any((tmp_path / "none").iterdir())


def test_it_restores_a_backup_and_refuses_bad_ones(
    home: Path, seeded: dict[str, Any], tmp_path: Path
) -> None:
    made = slowave(home, "--json", "backup", "--dir", str(tmp_path))
    assert made.code == 0, made.err
    backup = made.json()["data"]["path"]
    target = seeded["shown"][1]
    status = slowave(home, "--json", "show", target).json()["data"]["memory"]["status"]
    assert slowave(home, "forget", target, "--reason", "after the backup").code == 0

    unconfirmed = slowave(home, "restore", backup)
    assert unconfirmed.code == 2 and "--yes" in unconfirmed.err
    corrupt = tmp_path / "corrupt.sqlite3.gz"
    corrupt.write_bytes(gzip.compress(b"definitely not a database" * 100))
    for bad, message in (
        (corrupt, "not a readable Slowave backup"),
        (tmp_path / "missing.gz", "no such backup"),
    ):
        result = slowave(home, "restore", str(bad), "--yes")
        assert result.code == 1 and message in result.err, result.err
    assert not list(home.glob(".*restore-tmp"))
    assert slowave(home, "--json", "show", target).json()["data"]["memory"]["status"] == "forgotten"

    run_python(
        home,
        "from memory.models import PassLock; from django.utils import timezone; "
        "from datetime import timedelta; PassLock.objects.create(name='cluster_prototypes', "
        "holder='worker-1', expires_at=timezone.now() + timedelta(minutes=15))",
    )
    locked = slowave(home, "restore", backup, "--yes")
    assert locked.code == 1 and "cluster_prototypes holds its lock" in locked.err
    run_python(home, "from memory.models import PassLock; PassLock.objects.all().delete()")

    restored = slowave(home, "restore", backup, "--yes")
    assert restored.code == 0, restored.err
    assert slowave(home, "--json", "show", target).json()["data"]["memory"]["status"] == status


def test_rotation_keeps_the_newest_of_backups_made_in_one_second(tmp_path: Path) -> None:
    # The plain name is the first of its second; by name alone it would sort after "-2", "-3".
    names = [
        "slowave-20261130_120000.sqlite3.gz",
        "slowave-20261130_120001.sqlite3.gz",
        "slowave-20261130_120001-2.sqlite3.gz",
        "slowave-20261130_120001-3.sqlite3.gz",
    ]
    for name in names:
        (tmp_path / name).write_bytes(b"")
    removed = backup_rotate(directory=tmp_path, keep=2)
    assert sorted(p.name for p in removed) == sorted(names[:2])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names[2:])
