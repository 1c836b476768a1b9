"""Memory and Procedure pages: evidence chains, and the controls people have over them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.utils.html import format_html

from memory.admin.base import (
    ReadOnlyAdmin,
    ScopeFilter,
    admin_link,
    excerpt,
    redaction_rows,
    rounded,
)
from memory.admin.controls import ControlMixin
from memory.ids import memory_pk, memory_ref
from memory.models import Memory, Procedure
from memory.selectors import memory_evidence, session_detail
from memory.selectors.feedback import procedure_track_record
from memory.services.forgetting import (
    ControlResult,
    memory_reactivate,
    memory_reset_generalization,
)

STATUS_COLOURS = {
    "active": "#1a7f37",
    "stale": "#9a6700",
    "archived": "#57606a",
    "forgotten": "#cf222e",
    "superseded": "#9a6700",
}


def status_badge(status: str) -> str:
    colour = STATUS_COLOURS.get(status, "#57606a")
    return format_html('<span class="sw-badge" style="background:{}">{}</span>', colour, status)


@admin.register(Memory)
class MemoryAdmin(ControlMixin, ReadOnlyAdmin):
    list_display = (
        "memory_id",
        "short_content",
        "type",
        "scope",
        "status_badge",
        "stage",
        "salience_display",
        "origin",
        "created_at",
    )
    list_display_links = ("memory_id", "short_content")
    list_filter = (
        ScopeFilter,
        "type",
        "status",
        "generalization_stage",
        "origin",
        ("created_at", admin.DateFieldListFilter),
    )
    search_fields = ("content", "scope")
    search_help_text = "Search content or scope; an id such as sch_12 finds that memory."
    date_hierarchy = "created_at"
    ordering = ("-created_at", "-pk")
    actions = ["suppress_selected", "restore_selected", "reactivate_selected", "reset_selected"]
    change_form_template = "admin/memory/memory/change_form.html"
    readonly_fields = ("salience_display",)
    # The claim, type, scope and status head the page; these are the details beneath it.
    fieldsets = (
        (
            "Learning",
            {
                "fields": (
                    "salience_display",
                    "generalization_stage",
                    "stale_reason",
                    "superseded_by",
                    "duplicate_of",
                    "prototype",
                )
            },
        ),
        (
            "Provenance",
            {
                "classes": ("collapse",),
                "fields": (
                    "source_session",
                    "source_event",
                    "occurred_at",
                    "created_at",
                    "last_decayed_at",
                    "embedded_at",
                    "provenance",
                    "flags",
                    "redactions",
                    "normalized_hash",
                ),
            },
        ),
    )

    def public_ref(self, obj: Memory) -> str:
        return memory_ref(obj.pk)

    @admin.display(description="id", ordering="pk")
    def memory_id(self, obj: Memory) -> str:
        return memory_ref(obj.pk)

    @admin.display(description="content")
    def short_content(self, obj: Memory) -> str:
        return excerpt(obj.content)

    @admin.display(description="status", ordering="status")
    def status_badge(self, obj: Memory) -> str:
        return status_badge(obj.status)

    @admin.display(description="stage", ordering="generalization_stage")
    def stage(self, obj: Memory) -> int:
        return obj.generalization_stage

    @admin.display(description="salience", ordering="salience")
    def salience_display(self, obj: Memory) -> str:
        return rounded(obj.salience)

    def get_object(self, request: HttpRequest, object_id: str, from_field: Any = None) -> Any:
        """A pasted public id (`/admin/memory/memory/sch_7/change/`) names memory 7."""
        pk = memory_pk(object_id)
        return super().get_object(request, object_id if pk is None else str(pk), from_field)

    def get_search_results(self, request: HttpRequest, queryset: QuerySet, search_term: str) -> Any:
        pk = memory_pk(search_term.strip())
        if pk is not None:
            return queryset.filter(pk=pk), False
        return super().get_search_results(request, queryset, search_term)

    def get_urls(self) -> list[Any]:
        return self.control_urls() + super().get_urls()

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        memory = self.find(request, object_id)
        extra = dict(extra_context or {})
        if memory is not None:
            extra["chain"] = memory_evidence(memory=memory)
            extra["can_control"] = self.has_control_permission(request)
            extra["status_badge"] = status_badge(memory.status)
            extra["redactions"] = redaction_rows(memory.redactions)
        return super().change_view(request, object_id, form_url, extra)

    def _each(
        self, request: HttpRequest, queryset: QuerySet, service: Callable[..., ControlResult]
    ) -> None:
        for memory in queryset:

            def run(m: Memory = memory) -> ControlResult:
                return service(
                    memory_id=memory_ref(m.pk),
                    actor=request.user.get_username(),
                    now=timezone.now(),
                )

            self._report(request, run)

    @admin.action(description="Reactivate selected stale memories", permissions=["control"])
    def reactivate_selected(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._each(request, queryset, memory_reactivate)

    @admin.action(
        description="Reset generalization of selected (back to stage 0)", permissions=["control"]
    )
    def reset_selected(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._each(request, queryset, memory_reset_generalization)


@admin.register(Procedure)
class ProcedureAdmin(ControlMixin, ReadOnlyAdmin):
    list_display = (
        "id",
        "short_goal",
        "scope",
        "status_badge",
        "outcome",
        "deduplication_key",
        "created_at",
    )
    list_filter = (ScopeFilter, "status", "outcome", ("created_at", admin.DateFieldListFilter))
    search_fields = ("id", "goal", "summary", "scope", "deduplication_key")
    ordering = ("-created_at",)
    actions = ["suppress_selected", "restore_selected"]
    change_form_template = "admin/memory/procedure/change_form.html"
    exclude = ("embedding",)

    def public_ref(self, obj: Procedure) -> str:
        return obj.pk

    @admin.display(description="goal")
    def short_goal(self, obj: Procedure) -> str:
        return excerpt(obj.goal, 70)

    @admin.display(description="status", ordering="status")
    def status_badge(self, obj: Procedure) -> str:
        return status_badge(obj.status)

    def get_urls(self) -> list[Any]:
        return self.control_urls() + super().get_urls()

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        proc = self.find(request, object_id)
        extra = dict(extra_context or {})
        if proc is not None:
            extra["can_control"] = self.has_control_permission(request)
            extra["session_link"] = admin_link(proc.session)
            extra["detail"] = session_detail(session=proc.session)
            extra["track"] = procedure_track_record(procedure_id=proc.pk)
            # A procedure arrives in its session's commit, which records what was redacted.
            extra["redactions"] = redaction_rows(
                {p: k for p, k in proc.session.redactions.items() if p.startswith("procedure.")}
            )
        return super().change_view(request, object_id, form_url, extra)
