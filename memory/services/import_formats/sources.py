"""Which files a history import reads, from the PATH given to `slowave import`.

Claude Code: a `.jsonl` file; a project directory (every `*.jsonl` in it, sorted); or
`~/.claude/projects` itself, a directory holding no `*.jsonl` but project directories that
do, each read as its own project (and so its own default scope). Codex: a rollout file, or a
directory searched through for `rollout-*.jsonl` (`~/.codex/sessions` holds them under
YYYY/MM/DD/). ChatGPT: the `conversations.json` file, or the unpacked export directory holding it.
`transcript_format` tells a Codex rollout from a Claude Code transcript, for the stop hook.

Files are read one at a time, as the reader asks for the next, so a tree of gigabytes never
sits in memory at once (the reader keeps only the conversation text, whose total
memory.services.import_formats bounds). Each file is held to SLOWAVE_IMPORT_MAX_BYTES and read
as UTF-8, as a transcript import's file is: a file named on its own beyond that is refused; one
found in a directory is skipped and reported, and the rest imported.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from memory.errors import InvalidInput
from memory.replies.staff import SkippedFileOut
from memory.services.import_formats import SourceFile
from memory.services.imports import import_check_size, import_limit, import_lines


def _read(path: Path, project: str | None) -> SourceFile:
    try:
        import_check_size(size=path.stat().st_size, source=str(path))
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None
    return SourceFile(
        name=str(path), lines=import_lines(data=data, source=str(path)), project=project
    )


@dataclass
class HistorySources:
    """The files of one import, each read when iteration reaches it.

    `found_in_directory`: the files were listed from a directory, so one beyond the size
    limit is skipped (recorded in `skipped`) rather than refusing the others.
    """

    paths: list[tuple[Path, str | None]]
    found_in_directory: bool
    skipped: list[SkippedFileOut] = field(default_factory=list)

    def __iter__(self) -> Iterator[SourceFile]:
        limit = import_limit()
        for path, project in self.paths:
            if self.found_in_directory:
                try:
                    size = path.stat().st_size
                except OSError as exc:
                    raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None
                if size > limit:
                    reason = f"{size} bytes, over SLOWAVE_IMPORT_MAX_BYTES ({limit})"
                    self.skipped.append({"file": str(path), "bytes": size, "reason": reason})
                    continue
            yield _read(path, project)


def _claude_code(path: Path) -> HistorySources:
    if path.is_file():
        return HistorySources([(path, path.resolve().parent.name)], found_in_directory=False)
    own = sorted(p for p in path.glob("*.jsonl") if p.is_file())
    if own:
        return HistorySources([(p, path.resolve().name) for p in own], found_in_directory=True)
    paths: list[tuple[Path, str | None]] = []
    for project in sorted(p for p in path.iterdir() if p.is_dir()):
        paths += [(p, project.name) for p in sorted(project.glob("*.jsonl")) if p.is_file()]
    if not paths:
        raise InvalidInput(
            f"{path} holds no *.jsonl transcripts, nor project directories that do "
            "(Claude Code keeps them in ~/.claude/projects/<project>/)"
        )
    return HistorySources(paths, found_in_directory=True)


def _codex(path: Path) -> HistorySources:
    if path.is_file():
        return HistorySources([(path, None)], found_in_directory=False)
    found = sorted(p for p in path.rglob("rollout-*.jsonl") if p.is_file())
    if not found:
        raise InvalidInput(
            f"{path} holds no rollout-*.jsonl files (Codex keeps them in "
            "~/.codex/sessions/YYYY/MM/DD/)"
        )
    return HistorySources([(p, None) for p in found], found_in_directory=True)


def _chatgpt(path: Path) -> HistorySources:
    if path.is_dir():
        inside = path / "conversations.json"
        if not inside.is_file():
            raise InvalidInput(f"{path} holds no conversations.json (unzip the ChatGPT export)")
        path = inside
    # The export's one file is the whole import: beyond the limit it is refused, not skipped.
    return HistorySources([(path, None)], found_in_directory=False)


def history_sources(*, format: str, path: Path) -> HistorySources:
    """The files of a `format` history at `path`, in the order they are imported."""
    if not path.exists():
        raise InvalidInput(f"no such file or directory: {path}")
    if format == "chatgpt":
        return _chatgpt(path)
    if format == "codex":
        return _codex(path)
    return _claude_code(path)


def transcript_format(path: Path) -> str:
    """The history format of the file at `path`: codex for a Codex rollout (whose first line
    Codex always writes as a `session_meta` record), else claude-code; a file that cannot be
    read is left to the import to refuse."""
    try:
        with path.open("rb") as handle:
            first = handle.readline(import_limit()).strip() or handle.readline(import_limit())
    except OSError:
        return "claude-code"
    try:
        data = json.loads(first)
    except ValueError:
        return "claude-code"
    is_rollout = isinstance(data, dict) and data.get("type") == "session_meta"
    return "codex" if is_rollout else "claude-code"
