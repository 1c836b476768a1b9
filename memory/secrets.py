"""Credentials in text bound for storage: detection, and the SLOWAVE_SECRETS policy.

The detectors are plugins of Yelp's detect-secrets, used in-process through their compiled
patterns; this module chooses which plugins run, turns their matches into character spans, and
either refuses the text (`reject`, the default) or replaces each span with `[REDACTED:<kind>]`
(`redact`). The services that store text (activate, recall, remember, commit, transcript and
export import) call it once, before anything is written; where the redactions are recorded is
theirs to decide.

Left out on purpose: the high-entropy-string plugins, which flag commit SHAs, hashes and ids
in agent memory (see the README), the public-IP plugin (an address is not a credential), and the
plugins whose patterns are a bare keyword near any long string (Artifactory passwords, Cloudant,
IBM, SoftLayer). Nothing here verifies a secret over the network, as detect-secrets can.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from re import Pattern
from typing import Any

from detect_secrets.filters import heuristic
from detect_secrets.plugins import keyword
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector
from django.conf import settings
from pydantic import BaseModel

from memory.errors import InvalidInput
from memory.secret_rules import RULES

POLICIES = ("reject", "redact")
# Fields that name something (a scope, a session, a retrieval, a page): a redaction would make
# two different names one (`user:ghp_A…` and `user:ghp_B…` both `user:[REDACTED:…]`), so a
# credential in one is refused under either policy.
IDENTIFIERS = frozenset(
    {
        "scope",
        "session_id",
        "continuity_id",
        "retrieval_id",
        "continue_from",
        "cursor",
        "memory_id",
        "procedure_id",
        "replacement_memory_id",
        "session_key",
        "import_key",
    }
)
# Kind names as users read them; a redaction writes `[REDACTED:<kind>]` in their place.
_KINDS: dict[type[RegexBasedDetector], str] = {
    AWSKeyDetector: "AWS access key",
    AzureStorageKeyDetector: "Azure storage key",
    BasicAuthDetector: "password in URL",
    DiscordBotTokenDetector: "Discord bot token",
    GitHubTokenDetector: "GitHub token",
    GitLabTokenDetector: "GitLab token",
    JwtTokenDetector: "JSON Web Token",
    MailchimpDetector: "Mailchimp key",
    NpmDetector: "npm token",
    OpenAIDetector: "OpenAI key",
    PrivateKeyDetector: "private key",
    PypiTokenDetector: "PyPI token",
    SendGridDetector: "SendGrid key",
    SlackDetector: "Slack token",
    SquareOAuthDetector: "Square OAuth secret",
    StripeDetector: "Stripe key",
    TelegramBotTokenDetector: "Telegram bot token",
    TwilioKeyDetector: "Twilio key",
}
# These plugins capture a token's prefix in a group; every other pattern with groups captures
# the secret value itself (an AWS secret key after its name, the password of a URL).
_WHOLE_MATCH = (GitHubTokenDetector, GitLabTokenDetector)
# Mailchimp's pattern has no literal prefix and cost a sixth of a scan of long text; every key
# holds "-us", a substring test that skips it on text without one.
_NEEDLES: dict[type[RegexBasedDetector], str] = {MailchimpDetector: "-us"}
ASSIGNMENT = "secret assignment"
# Every name in the keyword plugin's list (api_key, passwd, secret, contraseña…) holds one.
_KEYWORD_HINTS = ("key", "pass", "pwd", "secret", "contrase")
# The keyword plugin's names, without the `\w*` its patterns follow them with: a pattern run at
# every position of "secretsecret…" re-reads the whole run of word characters from each one, so
# it is run only from the first name in each run (the rest of a match is the same from any).
_NAME = re.compile(keyword.DENYLIST_REGEX.removesuffix(r"\w*"), re.IGNORECASE)
_WORD_RUN = re.compile(r"\w+")
# How far past its name a match attempt reads (an unquoted value then runs on to its end).
_WINDOW = 512
# The comparison form (`"…" == password`) is tried only where a quote, an operator and a
# secret's name meet, from the opening quote at most _COMPARED_WINDOW characters before.
_COMPARED = re.compile(r"([\'\"`])[ \t]*[!=]{2,3}[ \t]*(\w*)")
_COMPARED_WINDOW = 256
_NON_SPACE = re.compile(r"\S*")
_IDENTIFIER = re.compile(r"[A-Za-z_][\w.]*$")
_LITERALS = {"none", "null", "nil", "true", "false", "undefined"}
# Values that stand in for a secret in examples and docs: the secret's own name
# (`password="password"`, `user:password@host`), "your…", "…here", or one character repeated.
_STAND_INS = {"password", "passwd", "pass", "pwd", "secret", "apikey", "key", "token", "changeme"}
_STAND_IN = re.compile(r"^your\W?|(^|[\W_])(here|example|placeholder)$|^(.)\3+$", re.I)
# A token the match ends inside of: the JWT pattern stops lazily before the signature.
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_\-.+/=]*")
_PEM_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|---- END SSH2 [A-Z ]*----")


@dataclass(frozen=True)
class Finding:
    kind: str
    start: int  # offsets into the scanned text, as a slice: text[start:end]
    end: int


@dataclass(frozen=True)
class _Detector:
    kind: str
    pattern: Pattern[str]
    group: int | None  # the capture that is the secret; None: the whole match, or all groups
    whole: bool = False
    needle: str = ""
    rule: bool = False  # one of memory.secret_rules: its group is a value, checked as such


@cache
def _detectors() -> tuple[tuple[_Detector, ...], tuple[_Detector, ...]]:
    """Built once per process: the plugins' token patterns, and the keyword plugin's
    assignments."""
    tokens: list[_Detector] = []
    for plugin_class, kind in _KINDS.items():
        whole = issubclass(plugin_class, _WHOLE_MATCH)
        for pattern in plugin_class.denylist:  # type: ignore[attr-defined]
            tokens.append(_Detector(kind, pattern, None, whole, _NEEDLES.get(plugin_class, "")))
    for rule in RULES:
        whole = rule.group is None
        tokens.append(_Detector(rule.kind, rule.pattern, rule.group, whole, rule.needle, True))
    # The keyword plugin's assignments whose value is quoted (`password = "…"`, `"api_key":
    # "…"`), and unquoted `NAME=value` as in a .env file. Its unquoted `password: …` form is
    # left out: in prose a colon after "password" or "secret" starts a sentence, not a value.
    chosen = dict(keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP)
    chosen[keyword.FOLLOWED_BY_EQUAL_SIGNS_REGEX] = 5
    assignments = [_Detector(ASSIGNMENT, pattern, group) for pattern, group in chosen.items()]
    return tuple(tokens), tuple(assignments)


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """(offset, line) of the lines that name a secret: the keyword plugin reads one line at a
    time, as in a file, and its patterns cost far more than a substring test."""
    offset = 0
    for line in text.split("\n"):
        lowered = line.lower()
        if any(hint in lowered for hint in _KEYWORD_HINTS):
            yield offset, line
        offset += len(line) + 1


def _spans(detector: _Detector, text: str) -> Iterator[tuple[int, int]]:
    for match in detector.pattern.finditer(text):
        yield from _match_spans(detector, match)


def _match_spans(detector: _Detector, match: re.Match[str]) -> Iterator[tuple[int, int]]:
    text = match.string
    if detector.rule and detector.group is not None:
        yield from _value_span(detector, match)
    elif detector.group is not None:
        yield from _assignment_span(match, detector.group)
    elif detector.whole or not match.re.groups:
        yield match.start(), _TOKEN_TAIL.match(text, match.end()).end()  # type: ignore[union-attr]
    else:
        for group in range(1, match.re.groups + 1):
            if match.group(group) and not _stand_in(match.group(group)):
                yield match.span(group)


def _value_span(detector: _Detector, match: re.Match[str]) -> Iterator[tuple[int, int]]:
    """The value one of Slowave's own rules captured, unless it is a reference or a stand-in
    (`$TOKEN`, `${TOKEN}`, `<token>`, `your-token-here`); a `…token=` value also needs a letter
    and a digit, as generated tokens have and words and counts do not."""
    group = detector.group or 0
    value = match.group(group)
    if (
        value.lower() in _LITERALS
        or _stand_in(value)
        or value.startswith(("$", "<", "%", "{"))
        or heuristic.is_templated_secret(value)
        or not any(c.isalpha() for c in value)
        or (detector.kind == ASSIGNMENT and not any(c.isdigit() for c in value))
    ):
        return
    yield match.span(group)


def _named_spans(detector: _Detector, line: str) -> Iterator[tuple[int, int]]:
    """An assignment pattern's spans in `line`, in linear time: a pattern that opens with the
    secret's name is tried once per run of word characters, at the run's first name, and reads
    at most _WINDOW characters past the run, where a regex search would retry it at every
    position and backtrack over the run from each."""
    if not detector.pattern.pattern.startswith(_NAME.pattern):
        yield from _compared_spans(detector, line)
        return
    after = 0
    for run in _WORD_RUN.finditer(line):
        if run.start() < after:
            continue
        name = _NAME.search(line, run.start(), run.end())
        if name is None:
            continue
        match = detector.pattern.match(line, name.start(), min(len(line), run.end() + _WINDOW))
        if match is not None:
            after = match.end()
            yield from _match_spans(detector, match)


def _compared_spans(detector: _Detector, line: str) -> Iterator[tuple[int, int]]:
    after = 0
    for candidate in _COMPARED.finditer(line):
        if candidate.start() < after or not _NAME.search(candidate.group(2)):
            continue
        quote = candidate.group(1)
        start = max(after, candidate.start() - _COMPARED_WINDOW)
        opening = line.rfind(quote, start, candidate.start())
        if opening < 0:
            continue
        match = detector.pattern.match(line, opening, candidate.end())
        if match is not None:
            after = match.end()
            yield from _match_spans(detector, match)


def _assignment_span(match: re.Match[str], group: int) -> Iterator[tuple[int, int]]:
    """The value of a secret-named assignment, unless detect-secrets' own heuristics call it a
    reference rather than a secret (`${VAR}`, `get_password()`, `<placeholder>`, no letters),
    or the value is a language literal (`password = None`) or a stand-in (`"your-key-here"`)."""
    start, end = match.span(group)
    value = match.group(group)
    if not match.group(group - 1):  # the group before the value is its opening quote
        # Unquoted, the plugin's value runs to the end of the line; a .env value ends at a space.
        value = value.split(None, 1)[0] if value.strip() else ""
        if value and start + len(value) == match.end(group):  # cut by the window: read on
            value = _NON_SPACE.match(match.string, start).group()  # type: ignore[union-attr]
        end = start + len(value)
        name = value.rstrip(",;)")  # in code, what follows the value
        if _IDENTIFIER.match(name) and _STAND_INS & set(re.split(r"[_.]", name.lower())):
            return  # a variable named for a secret (`account_key=storage_account_key`)
    if (
        not value
        or value.lower() in _LITERALS
        or _stand_in(value)
        or heuristic.is_templated_secret(value)
        or heuristic.is_prefixed_with_dollar_sign(value)
        or heuristic.is_not_alphanumeric_string(value)
        or heuristic.is_sequential_string(value)
        or heuristic.is_indirect_reference(match.group(0))
    ):
        return
    yield start, end


def _stand_in(value: str) -> bool:
    return re.sub(r"[\W_]", "", value.lower()) in _STAND_INS or bool(_STAND_IN.search(value))


def _key_block(text: str, start: int) -> tuple[int, int]:
    """A key block runs from its BEGIN line's dashes to its END line (or the end of the text)."""
    while start > 0 and text[start - 1] == "-":
        start -= 1
    end = _PEM_END.search(text, start)
    return start, end.end() if end else len(text)


def secrets_scan(text: str) -> list[Finding]:
    """Every credential in `text`, in order, overlapping spans merged (the first kind wins)."""
    tokens, assignments = _detectors()
    raw: list[Finding] = []
    # No token pattern spans a line break, so each runs once over the whole text.
    lowered = text.lower()
    for detector in tokens:
        if detector.needle not in lowered:
            continue
        for start, end in _spans(detector, text):
            if detector.kind == "private key":
                start, end = _key_block(text, start)
            raw.append(Finding(detector.kind, start, end))
    for offset, line in _lines(text):
        for detector in assignments:
            spans = _named_spans(detector, line)
            raw += [Finding(ASSIGNMENT, offset + a, offset + b) for a, b in spans]
    merged: list[Finding] = []
    for finding in sorted(raw, key=lambda f: (f.start, -f.end)):
        if merged and finding.start < merged[-1].end:
            last = merged[-1]
            merged[-1] = Finding(last.kind, last.start, max(last.end, finding.end))
        else:
            merged.append(finding)
    return merged


def secrets_redact(text: str, findings: list[Finding]) -> str:
    out, at = [], 0
    for finding in findings:
        out += [text[at : finding.start], f"[REDACTED:{finding.kind}]"]
        at = finding.end
    return "".join([*out, text[at:]])


def secrets_policy() -> str:
    return str(getattr(settings, "SLOWAVE_SECRETS", "reject"))


def describe(findings: list[Finding]) -> str:
    """`AWS access key at characters 42–61`: 1-based and inclusive, never the value."""
    return ", ".join(f"{f.kind} at characters {f.start + 1}–{f.end}" for f in findings)


class SecretGuard:
    """One write call's policy: `clean` each free-text field before anything is stored.

    Under `reject` the first field holding a credential raises InvalidInput naming the field
    and the kinds; under `redact` the text comes back with the spans replaced, and `redacted`
    maps each field path to {kind: count}, the record the admin shows."""

    def __init__(self, policy: str | None = None) -> None:
        self.policy = policy or secrets_policy()
        self.redacted: dict[str, dict[str, int]] = {}

    def clean(self, text: str, path: str) -> str:
        return self._apply(text, secrets_scan(text), path)

    def check_identifier(self, text: str, path: str) -> None:
        """Refuse an identifier holding a credential, whatever the policy: it is never rewritten."""
        findings = secrets_scan(text)
        if findings:
            raise InvalidInput.for_field_message(
                path,
                f"{path} holds a credential ({describe(findings)}); an identifier is never "
                "rewritten, under either SLOWAVE_SECRETS policy: choose one without the secret",
            )

    def _apply(self, text: str, findings: list[Finding], path: str) -> str:
        if not findings:
            return text
        if self.policy != "redact":
            raise InvalidInput.for_field_message(
                path,
                f"{path} holds a credential ({describe(findings)}); Slowave stores no secrets: "
                "remove it and send the text again (or run the server with "
                "SLOWAVE_SECRETS=redact to store it with the secret replaced)",
            )
        self.redacted[path] = dict(Counter(f.kind for f in findings))
        return secrets_redact(text, findings)

    def clean_value(self, value: Any, path: str) -> Any:
        """`value` with every string inside it cleaned: pydantic models, lists and dicts."""
        if isinstance(value, str):
            return self.clean(value, path)
        if isinstance(value, BaseModel):
            fields = {name: getattr(value, name) for name in type(value).model_fields}
            for name in IDENTIFIERS.intersection(fields):
                if isinstance(fields[name], str):
                    self.check_identifier(fields[name], _join(path, name))
                del fields[name]
            update = {
                name: cleaned
                for name, held in fields.items()
                if (cleaned := self.clean_value(held, _join(path, name))) != held
            }
            # Unvalidated on purpose: a redaction may lengthen a field past its input limit.
            return value.model_copy(update=update) if update else value
        if isinstance(value, list):
            return [self.clean_value(item, f"{path}[{i}]") for i, item in enumerate(value)]
        if isinstance(value, dict):
            members: dict[str, Any] = {}
            for index, (key, member) in enumerate(value.items()):
                name = self._clean_key(str(key), index, path, members)
                members[name] = self._clean_member(name, member, _join(path, name))
            return members
        return value

    def _clean_key(self, key: str, index: int, path: str, taken: dict[str, Any]) -> str:
        """A JSON member's name, scanned like a value. The field path names it by position
        (`task_context.<key 0>`), so that a refusal never echoes it; a redacted name that
        collides with one before it gets a `#n` suffix."""
        findings = secrets_scan(key)
        if not findings:
            return key
        name = self._apply(key, findings, _join(path, f"<key {index}>"))
        unique, n = name, 1
        while unique in taken:
            n += 1
            unique = f"{name} #{n}"
        return unique

    def _clean_member(self, name: str, value: Any, path: str) -> Any:
        """A JSON member's string is scanned as the assignment `name="value"`, so that
        {"password": "…"} is found as `password = "…"` would be."""
        if not isinstance(value, str):
            return self.clean_value(value, path)
        prefix = f'{name}="'
        findings = [
            Finding(f.kind, max(f.start - len(prefix), 0), min(f.end - len(prefix), len(value)))
            for f in secrets_scan(f'{prefix}{value}"')
            if f.end > len(prefix) and f.start < len(prefix) + len(value)
        ]
        return self._apply(value, findings, path)

    def under(self, prefix: str) -> dict[str, dict[str, int]]:
        """The redactions of fields below `prefix`, with paths relative to it."""
        cut = len(prefix) + 1
        return {p[cut:]: kinds for p, kinds in self.redacted.items() if p.startswith(prefix + ".")}


def redactions_merged(
    old: dict[str, dict[str, int]], new: dict[str, dict[str, int]], prefix: str = ""
) -> dict[str, dict[str, int]]:
    """`old` with `new` added (paths under `prefix`), counts summed: the record a session keeps
    across its calls."""
    merged = {path: dict(kinds) for path, kinds in old.items()}
    for path, kinds in new.items():
        into = merged.setdefault(_join(prefix, path), {})
        for kind, count in kinds.items():
            into[kind] = into.get(kind, 0) + count
    return merged


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
