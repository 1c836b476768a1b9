"""Human-facing CLI output that cannot drive the operator's terminal.

Memories, events and scopes are written by agents and imports: text holding ESC sequences
(clear the screen, move the cursor, print a fake "OK" line), a carriage return, or a bidi
override would act on the terminal of whoever runs `slowave show`. Every control character
but newline and tab, and the bidi embedding/override/isolate characters, is written as a
visible escape (`\\x1b`, `\\u202e`) instead. `--json` output is escaped by the JSON encoder.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from django.core.management.base import OutputWrapper
from rich.console import Console
from rich.segment import Segment

# C0 (except tab and newline), DEL, C1, and the bidi controls U+202A–U+202E, U+2066–U+2069.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` with every character that would act on a terminal shown as an escape."""
    return _UNSAFE.sub(_escape, text)


class PrintableOutput(OutputWrapper):
    """A command's stdout whose writes are passed through `printable`."""

    def write(  # type: ignore[override]  # OutputWrapper's own signature, not TextIOBase's
        self, msg: str = "", style_func: Any = None, ending: str | None = None
    ) -> None:
        super().write(printable(msg), style_func, ending)


class PrintableConsole(Console):
    """A rich Console that escapes the text it is given; its own styling still reaches a TTY."""

    def render_str(self, text: str, **kwargs: Any) -> Any:
        # Before markup and measurement, so tables keep their widths.
        return super().render_str(printable(text), **kwargs)

    def render(self, renderable: Any, options: Any = None) -> Iterable[Segment]:
        # Anything that did not pass through render_str (titles, Text built elsewhere).
        for segment in super().render(renderable, options):
            if segment.control is None and _UNSAFE.search(segment.text):
                yield Segment(printable(segment.text), segment.style)
            else:
                yield segment
