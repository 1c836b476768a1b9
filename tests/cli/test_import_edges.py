"""`slowave import` and `slowave backup` on awkward input: one clear line, never a traceback.

Through the real console script in a subprocess: a binary or non-UTF-8 file, a file past
SLOWAVE_IMPORT_MAX_BYTES (the limit POST /api/import applies too), a UTF-8 byte-order mark
(accepted), a line separator inside a string (not a line break), nesting 5,000 deep, and a
backup directory that is a file.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.runner import cli_env, slowave

TARGET = "project:edges"
LINE = {"session_key": "edge-1", "role": "user", "content": "Releases happen on Thursdays."}


def _clean_failure(result: object, *words: str) -> str:
    code, err = result.code, result.err  # type: ignore[attr-defined]
    assert code == 1, (code, err)
    assert "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    for word in words:
        assert word in err, err
    return str(err)


def test_it_refuses_a_binary_file_in_one_line(home: Path, tmp_path: Path) -> None:
    binary = tmp_path / "photo.jsonl"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")
    _clean_failure(
        slowave(home, "import", str(binary), "--scope", TARGET), "not UTF-8", "photo.jsonl"
    )


def test_it_refuses_a_latin_1_file_and_says_so_in_json_too(home: Path, tmp_path: Path) -> None:
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(json.dumps({**LINE, "content": "café"}, ensure_ascii=False).encode("latin-1"))
    _clean_failure(slowave(home, "import", str(latin), "--scope", TARGET), "not UTF-8")
    as_json = slowave(home, "--json", "import", str(latin), "--scope", TARGET)
    assert as_json.code == 1 and "Traceback" not in as_json.err
    assert as_json.json()["error"]["code"] == "invalid_input"


def test_it_accepts_a_byte_order_mark_at_the_start(home: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "bom.jsonl"
    transcript.write_bytes(b"\xef\xbb\xbf" + json.dumps(LINE).encode() + b"\r\n")
    dry = slowave(home, "--json", "import", str(transcript), "--scope", TARGET, "--dry-run")
    assert dry.code == 0, dry.err
    assert dry.json()["data"]["would_create"] == ["edge-1"]
    export = tmp_path / "bom-export.jsonl"
    header = {"record": "header", "format": "slowave-export", "version": 1}
    export.write_bytes(b"\xef\xbb\xbf" + json.dumps(header).encode() + b"\n")
    loaded = slowave(home, "--json", "import", str(export), "--format", "export")
    assert loaded.code == 0, loaded.err


def test_it_keeps_a_line_separator_inside_a_string_in_its_line(home: Path, tmp_path: Path) -> None:
    # Exports write U+2028 unescaped (ensure_ascii=False); only \n ends a JSONL record.
    transcript = tmp_path / "separator.jsonl"
    text = json.dumps({**LINE, "content": "first\u2028second"}, ensure_ascii=False)
    transcript.write_text(text + "\n", encoding="utf-8")
    dry = slowave(home, "--json", "import", str(transcript), "--scope", TARGET, "--dry-run")
    assert dry.code == 0, dry.err
    assert dry.json()["data"]["lines"] == 1


def test_it_refuses_a_file_past_the_import_limit_from_a_path_or_stdin(
    home: Path, tmp_path: Path
) -> None:
    transcript = tmp_path / "big.jsonl"
    transcript.write_text((json.dumps(LINE) + "\n") * 4)
    env = cli_env(home, SLOWAVE_IMPORT_MAX_BYTES="100")
    size = transcript.stat().st_size
    _clean_failure(
        slowave(home, "import", str(transcript), "--scope", TARGET, env=env),
        f"is {size} bytes",
        "at most 100 bytes",
        "SLOWAVE_IMPORT_MAX_BYTES",
    )
    piped = slowave(home, "import", "-", "--scope", TARGET, stdin=transcript.read_text(), env=env)
    _clean_failure(piped, "stdin", "at most 100 bytes", "SLOWAVE_IMPORT_MAX_BYTES")
    # Under the limit, the same file goes through.
    roomy = cli_env(home, SLOWAVE_IMPORT_MAX_BYTES=str(size))
    fits = slowave(home, "import", str(transcript), "--scope", TARGET, "--dry-run", env=roomy)
    assert fits.code == 0, fits.err


def test_it_refuses_5000_level_nesting_in_one_line(home: Path, tmp_path: Path) -> None:
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"session_key": "s", "metadata": ' + "[" * 5000 + "]" * 5000 + "}\n")
    _clean_failure(
        slowave(home, "import", str(deep), "--scope", TARGET),
        "line 1",
        "must nest at most 64 levels deep",
    )
    export = tmp_path / "deep-export.jsonl"
    export.write_text("[" * 5000 + "]" * 5000 + "\n")
    _clean_failure(
        slowave(home, "import", str(export), "--format", "export"), "line 1", "64 levels"
    )


def test_it_refuses_a_backup_directory_that_is_a_file(home: Path, tmp_path: Path) -> None:
    occupied = tmp_path / "not-a-dir"
    occupied.write_text("something else\n")
    _clean_failure(slowave(home, "backup", "--dir", str(occupied)), "is a file")
    beneath = slowave(home, "backup", "--dir", str(occupied / "backups"))
    _clean_failure(beneath, "cannot write a backup")
    as_json = slowave(home, "--json", "backup", "--dir", str(occupied))
    assert as_json.json()["error"]["field_errors"][0]["path"] == "dir"
    assert occupied.read_text() == "something else\n"
