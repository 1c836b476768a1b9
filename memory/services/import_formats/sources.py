"""Which files a history import reads, from the PATH given to `slowave import`.

Claude Code: a `.jsonl` file; a project directory (every `*.jsonl` in it, sorted); or
`~/.claude/projects` itself, a directory holding no `*.jsonl` but project directories that
do, each read as its own project (and so its own default scope). ChatGPT: the
`conversations.json` file, or the unpacked export directory holding it. Each file is held
to SLOWAVE_IMPORT_MAX_BYTES and read as UTF-8, as a transcript import's file is.
"""

from __future__ import annotations

from pathlib import Path

from memory.errors import InvalidInput
from memory.services.import_formats import SourceFile
from memory.services.imports import import_check_size, import_lines


def _read(path: Path, project: str | None) -> SourceFile:
    try:
        import_check_size(size=path.stat().st_size, source=str(path))
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None
    return SourceFile(
        name=str(path), lines=import_lines(data=data, source=str(path)), project=project
    )


def _claude_code(path: Path) -> list[SourceFile]:
    if path.is_file():
        return [_read(path, path.resolve().parent.name)]
    own = sorted(p for p in path.glob("*.jsonl") if p.is_file())
    if own:
        return [_read(p, path.resolve().name) for p in own]
    files: list[SourceFile] = []
    for project in sorted(p for p in path.iterdir() if p.is_dir()):
        files += [_read(p, project.name) for p in sorted(project.glob("*.jsonl")) if p.is_file()]
    if not files:
        raise InvalidInput(
            f"{path} holds no *.jsonl transcripts, nor project directories that do "
            "(Claude Code keeps them in ~/.claude/projects/<project>/)"
        )
    return files


def _chatgpt(path: Path) -> list[SourceFile]:
    if path.is_dir():
        inside = path / "conversations.json"
        if not inside.is_file():
            raise InvalidInput(f"{path} holds no conversations.json (unzip the ChatGPT export)")
        path = inside
    return [_read(path, None)]


def history_sources(*, format: str, path: Path) -> list[SourceFile]:
    """The files of a `format` history at `path`, read, in the order they are imported."""
    if not path.exists():
        raise InvalidInput(f"no such file or directory: {path}")
    if format == "chatgpt":
        return _chatgpt(path)
    return _claude_code(path)
