"""SLOWAVE_SECRETS on an export import, through the CLI: a credential in an exported memory
refuses the whole file (naming the row and field), or is replaced before anything is stored."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.cli.runner import cli_env, run_python, slowave

SCOPE = "project:exported"
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
PLACEHOLDER = "UPLOADUSERPLACEHOLDER"


@pytest.fixture(scope="module")
def export_with_key(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An export whose memory holds an AWS key id: made with a placeholder (the source store
    refuses the key itself), then edited as a file from elsewhere could be."""
    source = tmp_path_factory.mktemp("source")
    assert slowave(source, "migrate", "-v", "0").code == 0
    run_python(
        source,
        "from tests.cli.seeding import CLIENT, _commit\n"
        "from django.utils import timezone\n"
        "from memory.schemas import ActivateIn, RememberIn\n"
        "from memory.services.activate import session_activate\n"
        "from memory.services.remember import memory_remember\n"
        f"s = session_activate(data=ActivateIn(task='t', initial_goal='g', scope={SCOPE!r}),"
        " client=CLIENT, now=timezone.now())['session_id']\n"
        f"memory_remember(data=RememberIn(scope={SCOPE!r}, session_id=s, type='fact',"
        f" content='The bastion upload user is {PLACEHOLDER} on the build box'),"
        " now=timezone.now())\n"
        "_commit(s)\n",
    )
    path = tmp_path_factory.mktemp("files") / "export.jsonl"
    assert slowave(source, "export", "--scope", SCOPE, "--out", str(path)).code == 0
    path.write_text(path.read_text().replace(PLACEHOLDER, AWS_ID))
    return path


def _fresh(tmp_path: Path, name: str) -> Path:
    home = tmp_path / name
    home.mkdir()
    assert slowave(home, "migrate", "-v", "0").code == 0
    return home


def _store_bytes(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in home.glob("slowave.sqlite3*") if p.is_file())


def _memories(home: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(home / "slowave.sqlite3") as db:
        return db.execute("SELECT content, redactions FROM memory_memory").fetchall()


def test_reject_refuses_the_file_naming_the_row_and_field(
    export_with_key: Path, tmp_path: Path
) -> None:
    home = _fresh(tmp_path, "reject")
    refused = slowave(home, "import", str(export_with_key), "--format", "export")
    assert refused.code == 1
    assert ".content holds a credential (AWS access key at characters" in refused.err
    assert AWS_ID not in refused.err + refused.out
    assert _memories(home) == []


def test_redact_imports_the_memory_with_the_key_replaced(
    export_with_key: Path, tmp_path: Path
) -> None:
    home = _fresh(tmp_path, "redact")
    loaded = slowave(
        home,
        "--json",
        "import",
        str(export_with_key),
        "--format",
        "export",
        env=cli_env(home, SLOWAVE_SECRETS="redact"),
    )
    assert loaded.code == 0, loaded.err
    redacted = loaded.json()["data"]["redacted"]
    # The memory, the remember event it came from, and the episode formed at commit.
    assert sorted(path.split("_")[0] for path in redacted) == ["ep", "evt", "sch"]
    assert all(path.endswith(".content") for path in redacted)
    assert all(kinds == {"AWS access key": 1} for kinds in redacted.values())
    [(content, redactions)] = _memories(home)
    assert content == "The bastion upload user is [REDACTED:AWS access key] on the build box"
    assert json.loads(redactions) == {"content": {"AWS access key": 1}}
    with sqlite3.connect(home / "slowave.sqlite3") as db:
        [(session_redactions,)] = db.execute("SELECT redactions FROM memory_session").fetchall()
    assert sorted(p.split("_")[0] for p in json.loads(session_redactions)) == ["ep", "evt"]
    assert AWS_ID.encode() not in _store_bytes(home)


def test_a_credential_in_a_short_field_is_refused_under_either_policy(
    export_with_key: Path, tmp_path: Path
) -> None:
    """A scope (or key, or client name) is never rewritten: a redaction could merge two."""
    token = "ghp_" + "Zq8Lm2Xv4Ns6Pt0Rw3Ky5Hb7Jc9Df1Ga3Ue5Vo"
    edited = tmp_path / "scoped.jsonl"
    edited.write_text(
        export_with_key.read_text()
        .replace(AWS_ID, "AKIA-free text")
        .replace(f'"{SCOPE}"', f'"user:{token}"')
    )
    for policy in ("reject", "redact"):
        home = _fresh(tmp_path, policy)
        refused = slowave(
            home,
            "import",
            str(edited),
            "--format",
            "export",
            env=cli_env(home, SLOWAVE_SECRETS=policy),
        )
        assert refused.code == 1, refused.out
        assert ".scope holds a credential (GitHub token at characters" in refused.err
        assert "never rewritten" in refused.err and token not in refused.err + refused.out
        assert _memories(home) == []
