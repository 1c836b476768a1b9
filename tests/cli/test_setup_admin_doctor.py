"""setup, createadmin and doctor: what a person runs once, with clear refusals."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.runner import cli_env, slowave


def test_it_prints_and_merges_client_configurations(home: Path, tmp_path: Path) -> None:
    generic = slowave(home, "setup", "generic")
    assert generic.code == 0
    server = json.loads(generic.out)["mcpServers"]["slowave"]
    assert server["env"]["SLOWAVE_DB_PATH"] == str(home / "slowave.sqlite3")
    assert server["args"][-1] in ("mcp-serve", "mcp_serve")

    project = tmp_path / "project"
    (project).mkdir()
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}))
    wrote = slowave(
        home, "setup", "claude-code", "--write", "--dir", str(project), "--identity", "laptop"
    )
    assert wrote.code == 0, wrote.err
    merged = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert set(merged) == {"other", "slowave"} and merged["slowave"]["type"] == "stdio"
    assert merged["slowave"]["env"]["SLOWAVE_CLIENT_IDENTITY"] == "laptop"
    assert slowave(home, "setup", "cursor", "--write", "--dir", str(project)).code == 0
    assert "slowave" in json.loads((project / ".cursor" / "mcp.json").read_text())["mcpServers"]

    assert slowave(home, "setup", "generic", "--write").code == 1
    unknown = slowave(home, "setup", "vim")
    assert unknown.code == 2 and "invalid choice" in unknown.err
    (project / ".mcp.json").write_text("{broken")
    broken = slowave(home, "setup", "claude-code", "--write", "--dir", str(project))
    assert broken.code == 1 and "not valid JSON" in broken.err
    assert (project / ".mcp.json").read_text() == "{broken"


def test_it_creates_an_admin_and_refuses_duplicates_and_weak_passwords(home: Path) -> None:
    made = slowave(
        home,
        "createadmin",
        "--username",
        "grace",
        "--password-stdin",
        stdin="a-long-passphrase-42\n",
    )
    assert made.code == 0 and "Admin grace created" in made.out
    duplicate = slowave(
        home, "createadmin", "--username", "grace", "--password-stdin", stdin="another-one-99\n"
    )
    assert duplicate.code == 1 and "already exists" in duplicate.err
    weak = slowave(home, "createadmin", "--username", "hopper", "--password-stdin", stdin="123\n")
    assert weak.code == 1 and "password" in weak.err
    silent = slowave(home, "createadmin", "--username", "hopper", stdin="")
    assert silent.code == 1 and "--password-stdin" in silent.err


def test_it_passes_doctor_on_a_migrated_home_with_the_real_model(home: Path) -> None:
    env = cli_env(home, SLOWAVE_EMBEDDER="sentence-transformers")
    result = slowave(home, "--json", "doctor", env=env)
    assert result.code == 0, result.out + result.err
    checks = {c["name"]: c for c in result.json()["data"]["checks"]}
    assert checks["model"]["status"] == "ok" and "384-d" in checks["model"]["detail"]
    assert "pysqlite3" in checks["sqlite"]["detail"] and "sqlite-vec" in checks["sqlite"]["detail"]
    assert (
        checks["fts5"]["status"]
        == checks["wal"]["status"]
        == checks["migrations"]["status"]
        == "ok"
    )


def test_it_fails_doctor_with_exit_1_on_an_unmigrated_database(tmp_path: Path) -> None:
    result = slowave(tmp_path, "doctor", "--skip-model")
    assert result.code == 1
    assert (
        "migrations" in result.out and "unapplied" in result.out and "slowave migrate" in result.out
    )
    assert "1 check(s) failed: migrations" in result.err
