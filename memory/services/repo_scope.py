"""The scope of a directory: one per repository, whichever worktree or clone it is seen from.

`repo_scope(path)` is `project:<host>/<owner>/<repo>` from the git repository's `origin` URL
(normalised: scheme, user, port, `.git` and case dropped, so `git@github.com:Org/Repo.git` and
`https://github.com/org/repo` are one scope); else `project:<main worktree path>` (from
`git rev-parse --git-common-dir`, the same for every worktree of a repository); else
`project:<directory name>`, as before there was a repository to ask. A directory that does
not exist here (a transcript recorded on another machine) is named by its last part.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

# Kept free of Django and pydantic imports: the hooks' fast path imports this before Django.
CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")  # as memory.schemas refuses in a scope

SCOPE_MAX = 200
GIT_TIMEOUT = 2.0  # seconds; git answering slower than this is treated as no repository
# scp-like `user@host:owner/repo` (no scheme): the form ssh remotes are usually written in.
SCP_RE = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?P<path>(?!//).+)$")
URL_RE = re.compile(r"^[a-z][a-z0-9+.-]*://(?:[^@/]*@)?(?P<host>[^/:]+)(?::\d*)?(?P<path>/.*)?$")


def _git(path: Path, *args: str) -> str | None:
    """git's trimmed output in `path`, or None when git is missing, fails or is slow."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(path), *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    out = proc.stdout.strip()
    return out if proc.returncode == 0 and out else None


def normalised_remote(url: str) -> str | None:
    """`host/owner/repo` in lower case for a remote URL, or None for a local path remote."""
    url = url.strip()
    match = URL_RE.match(url.lower())
    if match is None and "://" not in url:
        match = SCP_RE.match(url.lower())
    if match is None:
        return None
    host = match.group("host")
    path = (match.group("path") or "").strip("/")
    path = re.sub(r"\.git$", "", path).strip("/")
    if not host or not path:
        return None
    return f"{host}/{path}"


def _scope(name: str) -> str:
    clean = CONTROL_RE.sub("", name).strip() or "unnamed"
    return f"project:{clean}"[:SCOPE_MAX]


def _basename(path: str) -> str:
    return re.split(r"[\\/]", path.rstrip("\\/"))[-1]


def repo_scope(path: str | Path) -> str:
    """The scope of the directory `path` (see the module's docstring)."""
    raw = str(path)
    directory = Path(raw).expanduser()
    if not directory.is_dir():
        return _scope(_basename(raw) or raw)
    directory = directory.resolve()
    origin = _git(directory, "config", "--get", "remote.origin.url")
    if origin is not None:
        remote = normalised_remote(origin)
        if remote is not None:
            return _scope(remote)
    common = _git(directory, "rev-parse", "--git-common-dir")
    if common is not None:
        common_dir = (directory / common).resolve()  # relative to `directory` when not absolute
        # A normal repository's common dir is <main worktree>/.git; a bare one is itself.
        main = common_dir.parent if common_dir.name == ".git" else common_dir
        return _scope(str(main.resolve()))
    return _scope(directory.name or str(directory))
