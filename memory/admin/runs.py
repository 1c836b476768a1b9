"""Background work and access records: worker runs, pass locks, API tokens."""

from __future__ import annotations

from django.contrib import admin

from memory.admin.base import ReadOnlyAdmin
from memory.models import ApiToken, PassLock, WorkerRun


@admin.register(WorkerRun)
class WorkerRunAdmin(ReadOnlyAdmin):
    list_display = (
        "pass_name",
        "status",
        "triggered_by",
        "scope",
        "started_at",
        "finished_at",
        "counts",
    )
    list_filter = ("pass_name", "status", "triggered_by", ("started_at", admin.DateFieldListFilter))
    search_fields = ("pass_name", "scope", "error")
    ordering = ("-started_at",)


@admin.register(PassLock)
class PassLockAdmin(ReadOnlyAdmin):
    list_display = ("name", "holder", "expires_at")


@admin.register(ApiToken)
class ApiTokenAdmin(ReadOnlyAdmin):
    # Only the hash is stored; tokens are issued where they can be shown once (REST/CLI).
    list_display = ("name", "user", "created_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at",)
    search_fields = ("name", "user__username")
    exclude = ("token_hash",)
