"""Secrets in history imports, through the `slowave import` console script: a Claude Code
transcript or a Codex rollout holding a token is refused whole under `reject` (naming FILE:LINE
and the kind, never the value) and stored redacted under `redact`, the record kept on the
session."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.cli.runner import cli_env, slowave
from tests.codex_rollouts import exchange, opening, write_rollout

GHP = "ghp_" + "Zq8Lm2Xv4Ns6Pt0Rw3Ky5Hb7Jc9Df1Ga3Ue5Vo"
PASSWORD = "Kd93nQ0-vault"


def _transcript(root: Path) -> Path:
    project = root / "-home-dev-src-deployer"
    project.mkdir(parents=True)
    common = {"cwd": "/home/dev/src/deployer", "sessionId": "cc-secrets-1"}
    rows = [
        {"type": "summary", "summary": "Deploy"},
        {
            **common,
            "type": "user",
            "uuid": "u1",
            "message": {"role": "user", "content": f"my github token is {GHP}"},
        },
        {
            **common,
            "type": "assistant",
            "uuid": "u2",
            "message": {
                "id": "m1",
                "role": "assistant",
                "content": [{"type": "text", "text": f"Set DB_PASSWORD={PASSWORD} in .env"}],
            },
        },
    ]
    path = project / "cc-secrets-1.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def _fresh(tmp_path: Path, name: str) -> Path:
    home = tmp_path / name
    home.mkdir()
    assert slowave(home, "migrate", "-v", "0").code == 0
    return home


def _store_bytes(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in home.glob("slowave.sqlite3*") if p.is_file())


def test_reject_refuses_the_history_naming_file_and_line(tmp_path: Path) -> None:
    path = _transcript(tmp_path / "history")
    home = _fresh(tmp_path, "reject")
    refused = slowave(home, "import", "--format", "claude-code", str(path))
    assert refused.code == 1
    assert f"{path}:2 holds a credential (GitHub token at characters" in refused.err
    assert "Traceback" not in refused.err
    assert GHP not in refused.err + refused.out
    with sqlite3.connect(home / "slowave.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM memory_event").fetchone() == (0,)
    assert GHP.encode() not in _store_bytes(home)


def test_redact_stores_the_history_redacted_with_the_record_on_the_session(
    tmp_path: Path,
) -> None:
    path = _transcript(tmp_path / "history")
    home = _fresh(tmp_path, "redact")
    env = cli_env(home, SLOWAVE_SECRETS="redact")
    loaded = slowave(home, "--json", "import", "--format", "claude-code", str(path), env=env)
    assert loaded.code == 0, loaded.err
    with sqlite3.connect(home / "slowave.sqlite3") as db:
        contents = [c for (c,) in db.execute("SELECT content FROM memory_event ORDER BY seq")]
        [(redactions,)] = db.execute("SELECT redactions FROM memory_session").fetchall()
    assert contents == [
        "my github token is [REDACTED:GitHub token]",
        "Set DB_PASSWORD=[REDACTED:secret assignment] in .env",
    ]
    assert json.loads(redactions) == {
        f"{path}:2": {"GitHub token": 1},
        f"{path}:3": {"secret assignment": 1},
    }
    assert GHP.encode() not in _store_bytes(home)
    assert PASSWORD.encode() not in _store_bytes(home)


def _rollout(root: Path) -> Path:
    rows = opening("019e-codex-secrets", "/home/dev/src/deployer")
    rows += exchange(f"my github token is {GHP}", f"Set DB_PASSWORD={PASSWORD} in .env", second=10)
    return write_rollout(root / "2026" / "05" / "04" / "rollout-019e-codex-secrets.jsonl", rows)


def test_a_codex_rollout_holding_a_secret_is_refused_or_redacted_never_stored(
    tmp_path: Path,
) -> None:
    path = _rollout(tmp_path / "sessions")
    home = _fresh(tmp_path, "codex-reject")
    refused = slowave(home, "import", "--format", "codex", str(tmp_path / "sessions"))
    assert refused.code == 1 and "Traceback" not in refused.err
    assert f"{path}:6 holds a credential (GitHub token at characters" in refused.err
    assert GHP not in refused.err + refused.out
    assert GHP.encode() not in _store_bytes(home)
    home = _fresh(tmp_path, "codex-redact")
    env = cli_env(home, SLOWAVE_SECRETS="redact")
    loaded = slowave(home, "--json", "import", "--format", "codex", str(path), env=env)
    assert loaded.code == 0, loaded.err
    with sqlite3.connect(home / "slowave.sqlite3") as db:
        contents = [c for (c,) in db.execute("SELECT content FROM memory_event ORDER BY seq")]
    assert contents == [
        "my github token is [REDACTED:GitHub token]",
        "Set DB_PASSWORD=[REDACTED:secret assignment] in .env",
    ]
    assert GHP.encode() not in _store_bytes(home)
    assert PASSWORD.encode() not in _store_bytes(home)
