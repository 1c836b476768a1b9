"""Slowave's own credential patterns, for what detect-secrets' plugins miss.

These are the credentials a coding agent sees most: provider keys with a fixed prefix
(Anthropic, GitHub fine-grained, Hugging Face, Google), and secrets written the way shells,
configs and HTTP do (`GITHUB_TOKEN=…`, YAML `AWS_SECRET_ACCESS_KEY: …`, `redis://:pw@host`,
`Authorization: Bearer …`, `?access_token=…`, `mysql -pPW`). memory.secrets runs them beside
the plugins. A rule whose `group` is set marks only that capture (the value, not its name) and
is subject to the same stand-in and reference checks as an assignment; `needle` is a
lower-case substring the text must hold for the pattern to run at all (a cheap skip).

Every pattern is linear: no nested or adjacent unbounded repeats over the same characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from re import Pattern


@dataclass(frozen=True)
class Rule:
    kind: str
    pattern: Pattern[str]
    group: int | None  # the capture that is the secret; None: the whole match
    needle: str


# A token's own characters, so that a match runs to the token's end.
_TAIL = r"[A-Za-z0-9_\-]"

RULES: tuple[Rule, ...] = (
    Rule(
        "Anthropic key", re.compile(rf"\bsk-ant-[a-z0-9]{{2,12}}-{_TAIL}{{20,}}"), None, "sk-ant-"
    ),
    Rule("GitHub token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{30,}"), None, "github_pat_"),
    Rule("Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,40}\b"), None, "hf_"),
    Rule("Google API key", re.compile(rf"\bAIza[0-9A-Za-z_\-]{{35}}(?!{_TAIL})"), None, "aiza"),
    # `GITHUB_TOKEN=…`, `export HF_TOKEN="…"`, `token = '…'` (a name ending in token).
    Rule(
        "secret assignment",
        re.compile(
            r"(?i)(?<![\w.])[a-z0-9_]{0,60}token[\"']?[ \t]*=[ \t]*[\"'`]?"
            r"([A-Za-z0-9_\-+/=:.~]{8,})(?![\w.(\-+/=:~])"  # a call is code, not a value
        ),
        1,
        "token",
    ),
    # YAML and other `name: value` configs, which the assignment rules leave out as prose.
    Rule(
        "AWS secret key",
        re.compile(
            r"(?i)\baws_?secret_?access_?key[\"']?[ \t]*[:=][ \t]*[\"']?([A-Za-z0-9/+]{40})\b"
        ),
        1,
        "secret",
    ),
    # A URL with a password and no user name: `redis://:pw@host`.
    Rule(
        "password in URL",
        re.compile(r"(?i)\b[a-z][a-z0-9+.\-]{1,20}://:([^\s/@:?#'\"{}]{1,200})@"),
        1,
        "://:",
    ),
    Rule(
        "bearer token",
        re.compile(r"(?i)\bauthorization[\"']?[ \t]*:[ \t]*bearer[ \t]+([A-Za-z0-9\-._~+/]{8,}=*)"),
        1,
        "bearer",
    ),
    Rule(
        "access token in URL",
        re.compile(r"(?i)[?&](?:access|refresh|id|auth)_?token=([^&\s#\"'<>]{8,})"),
        1,
        "token=",
    ),
    # `mysql -u root -pS3cret db`: the password glued to -p (a bare -p prompts for it).
    Rule(
        "MySQL password",
        re.compile(
            r"(?i)\bmysql(?:dump|admin|import|show|check)?[ \t][^\n]{0,200}?"
            r"[ \t]-p([^\s\"'\-][^\s\"']*)"
        ),
        1,
        "mysql",
    ),
)
