"""An import file before a loader reads it: the one size limit, the text, its lines.

`slowave import FILE` and `POST /api/import` both come through here, so they take the same
files: at most SLOWAVE_IMPORT_MAX_BYTES bytes of UTF-8 text, a leading byte-order mark (which
Windows editors write) dropped, split on line feeds only. `str.splitlines` would also split on
U+2028 and U+2029, which exports write unescaped inside strings. The loaders themselves are
memory.services.transcripts and memory.services.export_load.
"""

from __future__ import annotations

from django.conf import settings

from memory.errors import InvalidInput

BOM = "\ufeff"


def import_limit() -> int:
    return int(settings.SLOWAVE_IMPORT_MAX_BYTES)


def import_check_size(*, size: int, source: str) -> None:
    """Refuse `size` bytes from `source` (a file name, or `content`) beyond the limit."""
    limit = import_limit()
    if size > limit:
        raise InvalidInput(
            f"{source} is {size} bytes; an import may be at most {limit} bytes "
            "(SLOWAVE_IMPORT_MAX_BYTES): split the file, or raise the limit"
        )


def import_lines(*, data: bytes | str, source: str) -> list[str]:
    """The lines of an import file's bytes (or text), checked against the limit."""
    if isinstance(data, bytes):
        import_check_size(size=len(data), source=source)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput(
                f"{source} is not UTF-8 text (byte {exc.start} is {data[exc.start]:#04x}); "
                "an import is a JSONL file saved as UTF-8"
            ) from None
    else:
        import_check_size(size=len(data.encode("utf-8", "surrogatepass")), source=source)
        text = data
    return [line.removesuffix("\r") for line in text.removeprefix(BOM).split("\n")]
