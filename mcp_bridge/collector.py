"""Python's cycle collector, paused while a stdio server starts (spec §6.1's window).

Lives here: `pause`, called by `manage.py mcp_serve` (and `slowave mcp-serve`) first, before
the greeter and Django, and `resume`, called by the command once the SDK is imported, before
it serves.

Why: the imports on the way to the first tool call (Django's apps, the SDK's few hundred
pydantic models, our services) allocate some 200,000 tracked objects, and the collector ran
about 330 times over the growing heap while they did (an eighth of the SDK's import). Almost
none of it is garbage (about 2,000 objects were unreachable at `resume`), so `resume` freezes
what startup made (the collector skips it from then on) instead of collecting it, which would
cost 0.2 s on the same path; the collector runs as usual for everything after.

Only the standard library is imported here: `pause` runs before anything heavy.
"""

from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    """Stop automatic collection until `resume`."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """What startup allocated goes to the permanent generation; collection runs again.
    Does nothing unless `pause` stopped it (a command run in-process, as tests do)."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
