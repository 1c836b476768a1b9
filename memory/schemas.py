"""Pydantic input models shared by MCP tools, REST routes and the CLI (spec §6, §14).

Cross-field rules raise RuleViolation so the edge can report the exact rule message with
its field path; everything else is pydantic's own message prefixed by the dotted path.
"""

from __future__ import annotations

import json
import math
import re
import sys
import unicodedata
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, cast, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from memory.errors import InvalidInput

MemoryTypeName = Literal[
    "fact",
    "preference",
    "decision",
    "constraint",
    "instruction",
    "lesson",
    "warning",
    "open_question",
    "task",
    "artifact",
]
MEMORY_TYPES: tuple[str, ...] = get_args(MemoryTypeName)
CONTINUITY_RE = re.compile(r"^cont_[A-Za-z0-9_-]{32,96}$")
CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")
SCOPE_MESSAGE = "scope must use nonblank kind:id form"
CONTEXT_MAX_BYTES = 16 * 1024
CONTEXT_MAX_DEPTH = 5
JSON_MAX_DEPTH = 64  # any JSON text Slowave reads: bodies, import lines


class RuleViolation(ValueError):
    """A named rule broken; carries the field path it belongs to."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


def check_scope(value: str) -> str:
    """The scope in its one spelling (NFC), or RuleViolation: a scope spelt in NFD, or with an
    invisible format character (a zero-width space), would otherwise be a new, empty scope."""
    value = unicodedata.normalize("NFC", value)
    invisible = next((c for c in value if unicodedata.category(c) == "Cf"), None)
    if invisible is not None:
        raise RuleViolation(
            "scope",
            f"scope must not contain format characters (Unicode category Cf), "
            f"found U+{ord(invisible):04X}",
        )
    kind, sep, ident = value.partition(":")
    if (
        not 3 <= len(value) <= 200
        or not sep
        or not kind.strip()
        or not ident.strip()
        or CONTROL_RE.search(value)
    ):
        raise RuleViolation("scope", SCOPE_MESSAGE)
    return value


def json_problem(
    value: Any, path: str, *, max_depth: int, finite: bool = True, whole: str = "the body"
) -> tuple[str, str] | None:
    """Why `value` cannot be stored as JSON, as (field, message), or None: containers nested
    deeper than `max_depth`, or (when `finite`) a NaN or Infinity, which Python's and
    pydantic's JSON parsers read from `NaN` and `1e999` although JSON (and the database's
    JSON check) has no such number; an integer too long to convert (OversizedInteger).
    `field` is `path`, or the top-level member when `path` is "" (a whole text, which the
    message calls `whole`).

    Iterative, and stops at `max_depth`: a value nested thousands deep, which a recursive walk
    (json.dumps included) fails on, costs no more than a shallow one."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, keys = stack.pop()
        if isinstance(item, OversizedInteger):
            where = _path((path, *keys)) or whole
            digits = sys.get_int_max_str_digits()
            return _field(path, keys), f"{where} must be a number of at most {digits} digits"
        if finite and isinstance(item, float) and not math.isfinite(item):
            where = _path((path, *keys))
            return _field(path, keys), f"{where} must be a finite number (not NaN or Infinity)"
        if isinstance(item, dict):
            children: Iterable[tuple[str | int, Any]] = item.items()
        elif isinstance(item, list):
            children = enumerate(item)
        else:
            continue
        if len(keys) + 1 > max_depth:
            field = _field(path, keys)
            return field, f"{field or whole} must nest at most {max_depth} levels deep"
        stack.extend((child, (*keys, key)) for key, child in children)
    return None


def _field(path: str, keys: tuple[str | int, ...]) -> str:
    if path or not keys or not isinstance(keys[0], str):
        return path
    return keys[0]


class JsonTooDeep(ValueError):
    """A JSON text nested deeper than JSON_MAX_DEPTH, or holding a value no JSON parser of
    ours reads (an integer of thousands of digits); `field` is the top-level member it is
    under ("" for the whole text, then called `whole`), `message` says so."""

    def __init__(self, field: str, whole: str, message: str | None = None) -> None:
        self.field = field
        self.message = message or f"{field or whole} must nest at most {JSON_MAX_DEPTH} levels deep"
        super().__init__(self.message)


class OversizedInteger(str):
    """An integer literal longer than Python converts (sys.get_int_max_str_digits(), 4,300
    by default), kept as its text so the refusal can say where it stands; json.loads alone
    raises a bare ValueError that named nothing."""


def _parse_int(literal: str) -> int | OversizedInteger:
    limit = sys.get_int_max_str_digits()
    if limit and len(literal.lstrip("-")) > limit:
        return OversizedInteger(literal)
    return int(literal)


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_MEMBER_COLON = re.compile(r"\s*:")


def _deep_member(text: str) -> str:
    """The top-level member under which `text` nests past JSON_MAX_DEPTH ("" if none/array)."""
    depth, member = 0, ""
    for token in _JSON_TOKEN.finditer(text):
        mark = token.group()
        if mark in ("[", "{"):
            depth += 1
            if depth > JSON_MAX_DEPTH:
                return member
        elif mark in ("]", "}"):
            depth -= 1
        elif depth == 1 and _MEMBER_COLON.match(text, token.end()):
            try:
                member = str(json.loads(mark))
            except ValueError:
                member = ""
    return ""


def json_loads(text: str | bytes, *, whole: str = "the JSON") -> Any:
    """`json.loads` that refuses nesting past JSON_MAX_DEPTH with JsonTooDeep: far more than
    any valid body or record holds, and 5,000 levels would overflow the C parser's recursion
    (RecursionError, not a ValueError). Invalid JSON raises json.JSONDecodeError as usual."""
    try:
        value = json.loads(text, parse_int=_parse_int)
    except RecursionError:
        decoded = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        raise JsonTooDeep(_deep_member(decoded), whole) from None
    problem = json_problem(value, "", max_depth=JSON_MAX_DEPTH, finite=False, whole=whole)
    if problem is not None:
        raise JsonTooDeep(problem[0], whole, problem[1])
    return value


def check_context(value: dict[str, Any] | None, path: str) -> dict[str, Any] | None:
    if value is None:
        return None
    problem = json_problem(value, path, max_depth=CONTEXT_MAX_DEPTH)
    if problem is not None:
        raise RuleViolation(path, problem[1])
    if len(json.dumps(value, ensure_ascii=False).encode("utf-8")) > CONTEXT_MAX_BYTES:
        raise RuleViolation(path, f"{path} must serialise to at most 16 KiB")
    return value


def parse_timestamp(value: str, path: str) -> datetime:
    if not value.strip():
        raise RuleViolation(path, f"{path} must be nonblank when supplied")
    text = value.strip()
    if text.endswith(("z", "Z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise RuleViolation(path, f"{path} must be an RFC 3339 timestamp") from None
    if "T" not in text.upper() and " " not in text:
        raise RuleViolation(path, f"{path} must be an RFC 3339 timestamp")
    if parsed.tzinfo is None:
        raise RuleViolation(path, f"{path} must include a UTC offset")
    try:
        parsed.astimezone(UTC)  # stored in UTC: 9999-12-31T23:59:59-14:00 is past year 9999
    except OverflowError:
        raise RuleViolation(path, f"{path} must fall within years 1 to 9999 in UTC") from None
    return parsed


Scope = Annotated[str, Field(description="Memory scope as kind:id, e.g. project:checkout-service.")]
# A budget for working memory (retrieval/budget.py): estimated as the contract estimates
# accessible_field.approx_extra_tokens, so what "fits" and what is announced agree.
MAX_TOKENS_MIN = 256  # room for any memory's fields (≤ ~250 tokens at worst) and some text
MAX_TOKENS_MAX = 16_384  # past this a default page (≤ ~12,000 tokens) is already smaller
MaxTokens = Annotated[
    int | None,
    Field(
        default=None,
        strict=True,
        ge=MAX_TOKENS_MIN,
        le=MAX_TOKENS_MAX,
        description="Optional token budget for each page of the reply, 256–16,384. Tokens are "
        "estimated as the JSON of each shown item (memory, procedure, recall evidence) in "
        "characters / 4, the rule of accessible_field.approx_extra_tokens; the reply's fixed "
        "fields (ids, counts, warnings, accessible_field) are not counted. Items keep their "
        "rank order and a page takes them while they fit: memories, then procedures, then "
        "associated memories; the rest wait on later pages (continue_from, which replays this "
        "budget). A page's first memory too long for the budget is shown cut to its "
        "best-matching sentences with content_truncated and content_chars, never skipped; a "
        "procedure is never cut, so one larger than the budget fills a page alone. Omit for "
        "the default pages.",
    ),
]


class ActivateIn(Strict):
    task: str = Field(
        min_length=1,
        max_length=20_000,
        description="The task, verbatim: the main retrieval cue (of a longer cue, retrieval "
        "reads the first 8,000 characters).",
    )
    initial_goal: str = Field(
        min_length=1, max_length=2_000, description="What done looks like for this task."
    )
    scope: Scope
    continuity_id: str | None = Field(
        default=None, description="cont_… id from an earlier activation, to correlate sessions."
    )
    task_context: dict[str, Any] | None = Field(
        default=None, description="Structured context (≤16 KiB, depth ≤5)."
    )
    semantic_context: str | None = Field(
        default=None, max_length=4_000, description="Extra free text to steer retrieval."
    )
    max_tokens: MaxTokens = None

    _scope = field_validator("scope")(classmethod(lambda cls, v: check_scope(v)))

    @field_validator("continuity_id")
    @classmethod
    def _continuity(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not value:
            raise RuleViolation("continuity_id", "continuity_id must be nonblank when supplied")
        if not CONTINUITY_RE.match(value):
            raise RuleViolation("continuity_id", "continuity_id is malformed")
        return value

    @field_validator("task_context")
    @classmethod
    def _context(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return check_context(value, "task_context")


class RememberItem(Strict):
    content: str = Field(
        min_length=1, max_length=8_000, description="One standalone durable claim."
    )
    type: MemoryTypeName = Field(description="Kind of claim.")
    occurred_at: str | None = Field(
        default=None, description="When it happened, RFC 3339 with offset."
    )


class RememberIn(Strict):
    scope: Scope
    session_id: str = Field(description="sess_… id from slowave_activate.")
    content: str | None = Field(
        default=None,
        min_length=1,
        max_length=8_000,
        description="One standalone durable claim (scalar form).",
    )
    type: MemoryTypeName | None = Field(default=None, description="Kind of claim (scalar form).")
    occurred_at: str | None = Field(
        default=None, description="When it happened, RFC 3339 with offset (scalar form)."
    )
    memories: list[RememberItem] | None = Field(
        default=None, min_length=1, max_length=256, description="Batch form: up to 256 claims."
    )

    _scope = field_validator("scope")(classmethod(lambda cls, v: check_scope(v)))

    @model_validator(mode="after")
    def _form(self) -> RememberIn:
        scalar = self.content is not None or self.type is not None or self.occurred_at is not None
        if self.memories is not None and scalar:
            raise RuleViolation("memories", "memories is mutually exclusive with content and type")
        if self.memories is None and (self.content is None or self.type is None):
            raise RuleViolation("content", "content and type are required when memories is omitted")
        if self.occurred_at is not None:
            parse_timestamp(self.occurred_at, "occurred_at")
        for i, item in enumerate(self.memories or []):
            if item.occurred_at is not None:
                parse_timestamp(item.occurred_at, f"memories[{i}].occurred_at")
        return self

    def items(self) -> list[RememberItem]:
        if self.memories is not None:
            return self.memories
        # The validator above requires content and type when memories is omitted.
        content = cast(str, self.content)
        kind = cast(MemoryTypeName, self.type)
        return [RememberItem(content=content, type=kind, occurred_at=self.occurred_at)]


class RecallIn(Strict):
    session_id: str = Field(description="sess_… id from slowave_activate.")
    scope: Scope
    query: str | None = Field(
        default=None, max_length=4_000, description="What you need to know now."
    )
    task_context: dict[str, Any] | None = Field(
        default=None, description="Merged into the session's context."
    )
    semantic_context: str | None = Field(
        default=None, max_length=4_000, description="Extra free text to steer retrieval."
    )
    evidence: Literal["references", "full"] = Field(
        default="references", description="full adds evidence content."
    )
    continue_from: str | None = Field(
        default=None, description="cur_… cursor from a previous page."
    )
    max_tokens: MaxTokens = None

    _scope = field_validator("scope")(classmethod(lambda cls, v: check_scope(v)))

    @field_validator("task_context")
    @classmethod
    def _context(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return check_context(value, "task_context")

    @model_validator(mode="after")
    def _form(self) -> RecallIn:
        if self.continue_from is not None:
            if (
                self.query is not None
                or self.task_context is not None
                or self.semantic_context is not None
                or self.evidence != "references"
            ):
                raise RuleViolation(
                    "continue_from",
                    "continue_from is mutually exclusive with query, task_context, and full evidence",  # noqa: E501
                )
            if self.max_tokens is not None:
                raise RuleViolation(
                    "max_tokens",
                    "max_tokens is mutually exclusive with continue_from: a cursor pages with "
                    "the budget of the call that returned it",
                )
        elif not self.query:
            raise RuleViolation("query", "query must be nonblank when continue_from is omitted")
        return self


class MemoryFeedback(Strict):
    memory_id: str = Field(max_length=40, description="sch_… id shown by the retrieval.")
    assessment: str = Field(max_length=40, description="used | irrelevant | stale.")
    relevance: str | None = Field(
        default=None, max_length=40, description="relevant | irrelevant | uncertain."
    )
    effect: str | None = Field(
        default=None, max_length=40, description="For used: helped (default) | no_effect | harmed."
    )
    stale_reason: str | None = Field(
        default=None,
        max_length=40,
        description="For stale: contradicted | superseded | outdated | unsupported | withdrawn.",
    )
    replacement_memory_id: str | None = Field(
        default=None, max_length=40, description="Current memory that replaces a stale one."
    )
    reason: str | None = Field(
        default=None, max_length=2_000, description="Why; required for stale."
    )


class ProcedureFeedback(Strict):
    procedure_id: str = Field(max_length=80, description="proc_… id shown by the retrieval.")
    use: str = Field(max_length=40, description="used | not_used.")
    effect: str = Field(
        default="unknown", max_length=40, description="helped | no_effect | harmed | unknown."
    )
    contribution: str | None = Field(
        default=None, max_length=2_000, description="Required when used: what it contributed."
    )
    reason: str | None = Field(default=None, max_length=2_000)


class FeedbackRecord(Strict):
    retrieval_id: str = Field(
        max_length=40, description="ctx_… or rec_… id of the retrieval assessed."
    )
    memory_feedback: list[MemoryFeedback] | None = Field(default=None, max_length=256)
    procedure_feedback: list[ProcedureFeedback] | None = Field(default=None, max_length=64)
    retrieval_quality: str | None = Field(default=None, max_length=2_000)
    missing: list[Annotated[str, Field(max_length=500)]] | None = Field(default=None, max_length=32)
    coverage: Literal["partial", "complete"] = Field(
        default="partial", description="complete = every shown item is assessed."
    )


class FeedbackIn(Strict):
    retrieval_id: str | None = Field(
        default=None, max_length=40, description="ctx_… or rec_… id of the retrieval assessed."
    )
    memory_feedback: list[MemoryFeedback] | None = Field(default=None, max_length=256)
    procedure_feedback: list[ProcedureFeedback] | None = Field(default=None, max_length=64)
    retrieval_quality: str | None = Field(default=None, max_length=2_000)
    missing: list[Annotated[str, Field(max_length=500)]] | None = Field(default=None, max_length=32)
    coverage: Literal["partial", "complete"] | None = Field(
        default=None, description="complete = every shown item is assessed (default partial)."
    )
    items: list[FeedbackRecord] | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        description="Batch form: one record per retrieval.",
    )

    @model_validator(mode="after")
    def _form(self) -> FeedbackIn:
        scalar_fields = (
            "retrieval_id",
            "memory_feedback",
            "procedure_feedback",
            "retrieval_quality",
            "missing",
            "coverage",
        )
        if self.items is not None:
            if any(getattr(self, name) is not None for name in scalar_fields):
                raise RuleViolation(
                    "items", "items is mutually exclusive with scalar feedback fields"
                )
        elif not self.retrieval_id:
            raise RuleViolation("retrieval_id", "retrieval_id is required")
        return self

    def records(self) -> list[FeedbackRecord]:
        if self.items is not None:
            return self.items
        return [
            FeedbackRecord(
                retrieval_id=cast(str, self.retrieval_id),  # required without items
                memory_feedback=self.memory_feedback,
                procedure_feedback=self.procedure_feedback,
                retrieval_quality=self.retrieval_quality,
                missing=self.missing,
                coverage=self.coverage or "partial",
            )
        ]


class Verification(Strict):
    status: Literal["verified", "partially_verified", "unverified"]
    summary: str = Field(min_length=1, max_length=4_000)
    evidence_refs: list[Annotated[str, Field(max_length=500)]] = Field(
        default_factory=list, max_length=32
    )


class CommitProcedureStep(Strict):
    summary: str = Field(min_length=1, max_length=1_000)


class CommitProcedure(Strict):
    version: Literal[2] = 2
    goal: str | None = Field(default=None, max_length=1_000, description="Defaults to final_goal.")
    summary: str = Field(min_length=1, max_length=2_000)
    context: dict[str, Any] = Field(default_factory=dict)
    steps: list[CommitProcedureStep] = Field(
        min_length=1, max_length=64, description="Objects: [{summary}]."
    )
    caveats: list[Annotated[str, Field(min_length=1, max_length=1_000)]] = Field(
        default_factory=list, max_length=32
    )
    deduplication_key: str | None = Field(default=None, pattern=r"^[a-z][a-z0-9_.:-]{0,63}$")

    @field_validator("context")
    @classmethod
    def _context(cls, value: dict[str, Any]) -> dict[str, Any]:
        return check_context(value, "procedure.context") or {}


class TrajectoryEntry(Strict):
    kind: Literal["action", "observation"]
    summary: str = Field(min_length=1, max_length=1_000)
    status: Literal["started", "succeeded", "failed", "unknown"] = "unknown"


class CommitIn(Strict):
    session_id: str = Field(description="sess_… id from slowave_activate.")
    final_goal: str = Field(min_length=1, max_length=2_000)
    outcome: Literal["success", "partial", "failure"]
    outcome_summary: str = Field(min_length=1, max_length=8_000)
    verification: Verification
    procedure: CommitProcedure | None = Field(
        default=None, description="A reusable procedure learnt in this task."
    )
    trajectory: list[TrajectoryEntry] | None = Field(default=None, max_length=32)


def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def validation_error(exc: ValidationError, prefix: str = "") -> InvalidInput:
    field_errors: list[dict[str, str]] = []
    parts: list[str] = []
    for err in exc.errors(include_url=False):
        cause = (err.get("ctx") or {}).get("error")
        if isinstance(cause, RuleViolation):
            path = prefix + cause.path if prefix and cause.path else cause.path
            field_errors.append({"path": path, "message": cause.message})
            parts.append(cause.message)
            continue
        path = _path(tuple(err["loc"]))
        path = f"{prefix}{path}" if prefix else path
        field_errors.append({"path": path, "message": err["msg"]})
        parts.append(f"{path}: {err['msg']}" if path else err["msg"])
    return InvalidInput("; ".join(parts), field_errors=field_errors)


def nul_member(value: dict[str, Any]) -> str | None:
    """The first top-level member of `value` holding U+0000 in a string or a key, at any depth.

    PostgreSQL's text and jsonb cannot hold NUL (SQLite can): refused alike on both backends.
    Only the member is named, never a key under it (a key may be a secret)."""
    for member, item in value.items():
        stack = [item]
        found = "\x00" in member
        while stack and not found:
            node = stack.pop()
            if isinstance(node, str):
                found = "\x00" in node
            elif isinstance(node, dict):
                found = any("\x00" in str(key) for key in node)
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
        if found:
            return member
    return None


def without_nul(value: Any) -> Any:
    """`value` with U+0000 dropped from every string and key (imports strip what calls refuse)."""
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, dict):
        return {without_nul(key): without_nul(item) for key, item in value.items()}
    if isinstance(value, list):
        return [without_nul(item) for item in value]
    return value


def parse_input(model: type[BaseModel], raw: Any) -> Any:
    if not isinstance(raw, dict):
        raise InvalidInput(
            "arguments must be an object",
            field_errors=[{"path": "", "message": "arguments must be an object"}],
        )
    member = nul_member(raw)
    if member is not None:
        field = member.replace("\x00", "\\0")
        message = f"{field} must not contain U+0000 (NUL), in a value or a key"
        raise InvalidInput(message, field_errors=[{"path": field, "message": message}])
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise validation_error(exc) from None
