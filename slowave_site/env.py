"""Typed readers for SLOWAVE_* environment variables, and the one clean exit on a bad value.

A refused value raises `SettingError` (an `ImproperlyConfigured`) whose text is one line naming
the variable, the rule and what was given. Entry points call `settings_or_exit()` before anything
else, so a person sees that line and exit status 2 (usage), never a traceback.
"""

from __future__ import annotations

import math
import os
import re
import sys
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


class SettingError(ImproperlyConfigured):
    """An environment variable Slowave refuses; str() is the whole message."""

    def __init__(self, name: str, rule: str, got: object | None = None) -> None:
        self.name, self.rule = name, rule
        suffix = "" if got is None else f" (got {got!r})"
        super().__init__(f"{name} {rule}{suffix}")


def settings_or_exit(prog: str = "slowave") -> None:
    """Load the settings module now; a refused variable ends the process with one line, status 2."""
    from django.conf import settings

    try:
        settings.INSTALLED_APPS  # noqa: B018 - importing the module runs every check
    except SettingError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def _raw(name: str) -> str | None:
    raw = os.environ.get(name)
    return None if raw is None or raw.strip() == "" else raw.strip()


def _bounds(kind: str, minimum: float | None, maximum: float | None) -> str:
    if minimum is not None and maximum is not None:
        return f"{kind} between {minimum:g} and {maximum:g}"
    if minimum is not None:
        return f"{kind}, {minimum:g} or more"
    if maximum is not None:
        return f"{kind}, {maximum:g} or less"
    return kind


def _in_bounds(value: float, minimum: float | None, maximum: float | None) -> bool:
    return (minimum is None or value >= minimum) and (maximum is None or value <= maximum)


def env_str(name: str, default: str) -> str:
    value = _raw(name)
    return default if value is None else value


def env_int(
    name: str, default: int, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    raw = _raw(name)
    if raw is None:
        return default
    rule = "must be " + _bounds("an integer", minimum, maximum)
    try:
        value = int(raw)
    except ValueError:
        raise SettingError(name, rule, raw) from None
    if not _in_bounds(value, minimum, maximum):
        raise SettingError(name, rule, raw)
    return value


def env_float(
    name: str, default: float, *, minimum: float | None = None, maximum: float | None = None
) -> float:
    raw = _raw(name)
    if raw is None:
        return default
    rule = "must be " + _bounds("a number", minimum, maximum)
    try:
        value = float(raw)
    except ValueError:
        raise SettingError(name, rule, raw) from None
    if not math.isfinite(value) or not _in_bounds(value, minimum, maximum):
        raise SettingError(name, rule, raw)
    return value


def env_bool(name: str, default: bool) -> bool:
    raw = _raw(name)
    if raw is None:
        return default
    if raw.lower() in _TRUE:
        return True
    if raw.lower() in _FALSE:
        return False
    raise SettingError(name, "must be true or false", raw)


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = env_str(name, default)
    if value not in choices:
        raise SettingError(name, f"must be one of {', '.join(choices)}", value)
    return value


def env_path(name: str, default: Path) -> Path:
    return Path(env_str(name, str(default))).expanduser()


def private_dir(name: str, path: Path) -> None:
    """Create the directory (mode 0700) that variable `name` points into, or refuse the value."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        rule = f"needs a directory Slowave can create: {path} ({exc.strerror})"
        raise SettingError(name, rule) from None


# A host name or pattern as Django's ALLOWED_HOSTS takes it: `name`, `.domain`, `*`, `[v6]`.
_HOST_PATTERN = re.compile(r"\*|\.?[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*|\[[0-9A-Fa-f:.]+\]")


def allowed_host_names(name: str) -> list[str]:
    """A comma-separated list of host names (no scheme, port or path), lower-cased."""
    hosts = [h.strip().lower() for h in env_str(name, "").split(",") if h.strip()]
    for host in hosts:
        if not _HOST_PATTERN.fullmatch(host):
            rule = (
                "must be comma-separated host names without scheme, port or path "
                "(e.g. slowave.internal,.example.com)"
            )
            raise SettingError(name, rule, host)
    return hosts


def bracketed_host(host: str) -> str:
    """`host` as a Host header carries it: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
