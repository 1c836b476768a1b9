"""The one application error hierarchy, translated at each edge (MCP, HTTP, CLI, admin)."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class ErrorDetail(TypedDict):
    """The `error` of a failed envelope (memory.api.replies.ErrorDetailOut documents it)."""

    code: str
    message: str
    retryable: bool
    field_errors: NotRequired[list[dict[str, str]]]
    outstanding: NotRequired[Any]


class SlowaveError(Exception):
    code = "internal_error"
    retryable = True

    def __init__(
        self,
        message: str,
        *,
        field_errors: list[dict[str, str]] | None = None,
        outstanding: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.field_errors = field_errors
        self.outstanding = outstanding

    def as_error(self) -> ErrorDetail:
        error: ErrorDetail = {
            "code": self.code,
            "message": self.message,
            "retryable": self.retryable,
        }
        if self.field_errors is not None:
            error["field_errors"] = self.field_errors
        if self.outstanding is not None:
            error["outstanding"] = self.outstanding
        return error


class InvalidInput(SlowaveError):
    code = "invalid_input"
    retryable = False

    @classmethod
    def for_field(cls, path: str, message: str) -> InvalidInput:
        return cls(f"{path}: {message}", field_errors=[{"path": path, "message": message}])

    @classmethod
    def for_field_message(cls, path: str, message: str) -> InvalidInput:
        """A rule error whose message already names the field."""
        return cls(message, field_errors=[{"path": path, "message": message}])


class NotFound(SlowaveError):
    code = "not_found"
    retryable = False


class IncompleteFeedback(SlowaveError):
    code = "incomplete_feedback"
    retryable = True


class StorageBusy(SlowaveError):
    code = "storage_busy"
    retryable = True


class StorageError(SlowaveError):
    code = "storage_error"
    retryable = False


class StorageCorrupt(SlowaveError):
    """The store's file is damaged; retrying cannot help, a restore from backup can."""

    code = "storage_corrupt"
    retryable = False


class StorageReadOnly(SlowaveError):
    """The store cannot be written (file, directory or mount is read-only)."""

    code = "storage_read_only"
    retryable = False


class StorageFull(SlowaveError):
    """No space left for the store; the same call succeeds once space is freed."""

    code = "storage_full"
    retryable = True


class StorageMissing(SlowaveError):
    """The database file was deleted or replaced under the running process."""

    code = "storage_missing"
    retryable = False


class EmbedderMismatch(SlowaveError):
    """The store's vectors were written by another embedder than this process's: encoding
    with it would put two kinds of vector in one index (memory.embedder_record)."""

    code = "embedder_mismatch"
    retryable = False


# Faults of the store itself: named, logged in one line, never an item-level failure.
STORAGE_FAULTS = (StorageCorrupt, StorageReadOnly, StorageFull, StorageMissing)

_CORRUPT = (
    "the database is damaged; run `slowave doctor`, then restore a backup with `slowave restore`"
)
_READ_ONLY = "the database cannot be written (read-only file, directory or mount)"
_FULL = "no space left for the database; free disk space and retry the call"
_MISSING = (
    "the database file was deleted or replaced under the running server; nothing was written: "
    "restart the server (restore a backup with `slowave restore` if the store is gone)"
)


class HostNotAllowed(SlowaveError):
    """The Host header names no host this server answers to (DNS-rebinding protection)."""

    code = "host_not_allowed"
    retryable = False


class OriginNotAllowed(SlowaveError):
    """A browser sent the request from a page on a host this server does not answer to."""

    code = "origin_not_allowed"
    retryable = False


class UnsupportedMediaType(SlowaveError):
    """A write whose body is not declared as JSON."""

    code = "unsupported_media_type"
    retryable = False


def as_slowave_error(exc: BaseException) -> SlowaveError:
    """Map any exception raised below an edge to the error the edge reports."""
    if isinstance(exc, SlowaveError):
        return exc
    import errno

    from django.db import DatabaseError, OperationalError

    text = str(exc).lower()
    if isinstance(exc, OperationalError) and "locked" in text:
        return StorageBusy("storage is busy; retry the call")
    if isinstance(exc, DatabaseError | OSError):
        if "deleted or replaced under this process" in text:
            return StorageMissing(_MISSING)
        if "malformed" in text or "not a database" in text or "is corrupt" in text:
            return StorageCorrupt(_CORRUPT)
        if (
            "readonly database" in text
            or "read-only file system" in text
            or "read-only transaction" in text
            or getattr(exc, "errno", None) == errno.EROFS
        ):
            return StorageReadOnly(_READ_ONLY)
        if (
            "disk is full" in text
            or "no space left" in text
            or getattr(exc, "errno", None) == errno.ENOSPC
        ):
            return StorageFull(_FULL)
    return SlowaveError("internal error; the details are in the server log")
