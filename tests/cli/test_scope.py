"""`slowave scope`: one scope per repository, from any worktree or clone of it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memory.services.repo_scope import normalised_remote, repo_scope
from tests.cli.runner import slowave


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    main = tmp_path / "myrepo"
    main.mkdir()
    git(main, "init", "-q")
    (main / "a.txt").write_text("a\n")
    git(main, "add", "a.txt")
    git(main, "commit", "-q", "-m", "first")
    return main


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:Org/Repo.git",
        "https://github.com/org/repo",
        "https://user@github.com/Org/Repo.git/",
        "ssh://git@github.com:22/org/repo.git",
    ],
)
def test_remote_forms_of_one_repository_normalise_to_one(url: str) -> None:
    assert normalised_remote(url) == "github.com/org/repo"


def test_a_local_path_remote_is_no_remote() -> None:
    assert normalised_remote("/srv/git/repo.git") is None
    assert normalised_remote("file:///srv/git/repo.git") is None


def test_two_worktrees_without_origin_give_the_main_worktree_path(
    repo: Path, tmp_path: Path
) -> None:
    other = tmp_path / "elsewhere" / "feature-x"
    git(repo, "worktree", "add", "-q", str(other))
    (repo / "sub").mkdir()
    expected = f"project:{repo.resolve()}"
    assert repo_scope(repo) == expected
    assert repo_scope(other) == expected
    assert repo_scope(repo / "sub") == expected


def test_two_worktrees_with_origin_give_the_remote(repo: Path, tmp_path: Path) -> None:
    git(repo, "remote", "add", "origin", "git@github.com:Org/Repo.git")
    other = tmp_path / "wt2"
    git(repo, "worktree", "add", "-q", str(other))
    assert repo_scope(repo) == repo_scope(other) == "project:github.com/org/repo"


def test_outside_a_repository_the_directory_name(tmp_path: Path) -> None:
    plain = tmp_path / "notes"
    plain.mkdir()
    assert repo_scope(plain) == "project:notes"
    # Recorded on another machine: only the name is left to go by.
    assert repo_scope("/nonexistent/home/me/src/myapp") == "project:myapp"


def test_the_command_prints_the_scope_of_each_worktree(repo: Path, tmp_path: Path) -> None:
    git(repo, "remote", "add", "origin", "https://github.com/org/repo")
    other = tmp_path / "wt3"
    git(repo, "worktree", "add", "-q", str(other))
    first = slowave(tmp_path, "scope", str(repo))
    second = slowave(tmp_path, "--json", "scope", str(other))
    assert first.code == 0, first.err
    assert first.out.strip() == "project:github.com/org/repo"
    assert second.json()["data"]["scope"] == "project:github.com/org/repo"


def _transcript(path: Path, session: str, cwd: Path, text: str) -> Path:
    import json

    line = {
        "type": "user",
        "sessionId": session,
        "uuid": f"{session}-1",
        "cwd": str(cwd),
        "timestamp": "2026-01-02T03:04:05Z",
        "message": {"role": "user", "content": text},
    }
    path.write_text(json.dumps(line) + "\n")
    return path


def test_import_files_each_worktree_s_history_under_the_repository(
    repo: Path, tmp_path: Path
) -> None:
    other = tmp_path / "wt4"
    git(repo, "worktree", "add", "-q", str(other))
    home = tmp_path / "home"
    home.mkdir()
    assert slowave(home, "migrate", "-v", "0").code == 0
    projects = tmp_path / "projects"
    for name, cwd in (("a", repo), ("b", other)):
        (projects / name).mkdir(parents=True)
        _transcript(projects / name / f"{name}.jsonl", f"s-{name}", cwd, f"turn in {name}")
    result = slowave(home, "--json", "import", "--format", "claude-code", str(projects))
    assert result.code == 0, result.err
    scopes = {report["scope"] for report in result.json()["data"]["scopes"]}
    assert scopes == {f"project:{repo.resolve()}"}
    # An explicit scope still wins over the derived one.
    (projects / "c").mkdir()
    _transcript(projects / "c" / "c.jsonl", "s-c", other, "turn in c")
    c_dir = str(projects / "c")
    given = slowave(
        home, "--json", "import", "--format", "claude-code", c_dir, "--scope", "project:given"
    )
    assert [r["scope"] for r in given.json()["data"]["scopes"]] == ["project:given"]
