"""Read-only pages for the append-only log and its derived records (sessions, retrievals, …)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse

from memory.admin.base import (
    ReadOnlyAdmin,
    ScopeFilter,
    admin_link,
    excerpt,
    redaction_rows,
    rounded,
    target_link,
)
from memory.models import (
    Association,
    Continuity,
    Cursor,
    Episode,
    Event,
    Exposure,
    FeedbackEvent,
    ForgetLog,
    LearningApplication,
    Prototype,
    Retrieval,
    Session,
    Support,
)
from memory.selectors import retrieval_detail, retrieval_explain, session_detail

DATE = admin.DateFieldListFilter


class DetailAdmin(ReadOnlyAdmin):
    """A read-only page with an extra detail section built by a selector."""

    def detail(self, obj: Any) -> Mapping[str, Any]:
        return {}

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        obj = self.find(request, object_id)
        extra = {
            **(extra_context or {}),
            **({"detail": self.detail(obj)} if obj is not None else {}),
        }
        return super().change_view(request, object_id, form_url, extra)


@admin.register(Session)
class SessionAdmin(DetailAdmin):
    list_display = (
        "id",
        "short_task",
        "scope",
        "status",
        "outcome",
        "feedback_status",
        "ended_by",
        "started_at",
    )
    list_filter = (
        ScopeFilter,
        "status",
        "outcome",
        "feedback_status",
        "ended_by",
        "episodes_state",
        ("started_at", DATE),
    )
    search_fields = ("id", "task", "scope", "import_key", "client_name")
    date_hierarchy = "started_at"
    ordering = ("-started_at",)
    change_form_template = "admin/memory/session/change_form.html"

    @admin.display(description="task")
    def short_task(self, obj: Session) -> str:
        return excerpt(obj.task, 70)

    def detail(self, obj: Session) -> Mapping[str, Any]:
        return {**session_detail(session=obj), "redactions": redaction_rows(obj.redactions)}


@admin.register(Retrieval)
class RetrievalAdmin(DetailAdmin):
    list_display = (
        "id",
        "kind",
        "short_query",
        "scope",
        "relevant_total",
        "catalog_truncated",
        "session_link",
        "created_at",
    )
    list_filter = (ScopeFilter, "kind", "catalog_truncated", "evidence_mode", ("created_at", DATE))
    search_fields = ("id", "query", "scope", "session__id")
    date_hierarchy = "created_at"
    ordering = ("-created_at",)
    exclude = ("catalog",)  # shown as a readable table instead of raw JSON
    change_form_template = "admin/memory/retrieval/change_form.html"

    @admin.display(description="query")
    def short_query(self, obj: Retrieval) -> str:
        return excerpt(obj.query, 70)

    @admin.display(description="session")
    def session_link(self, obj: Retrieval) -> str:
        return admin_link(obj.session)

    def detail(self, obj: Retrieval) -> Mapping[str, Any]:
        # People inspecting a retrieval see its whole catalog, shown to the agent or not.
        explanation = retrieval_explain(retrieval_id=obj.pk, all_items=True)
        return {**retrieval_detail(retrieval=obj), "explanation": explanation}


@admin.register(Event)
class EventAdmin(ReadOnlyAdmin):
    list_display = (
        "public_id",
        "kind",
        "session_link",
        "seq",
        "short_content",
        "recorded_at",
        "occurred_at",
    )
    list_filter = ("kind", ("recorded_at", DATE))
    search_fields = ("content", "session__id")
    ordering = ("-pk",)
    list_select_related = ("session",)

    @admin.display(description="session")
    def session_link(self, obj: Event) -> str:
        return admin_link(obj.session)

    @admin.display(description="content")
    def short_content(self, obj: Event) -> str:
        return excerpt(obj.content)


@admin.register(Episode)
class EpisodeAdmin(ReadOnlyAdmin):
    list_display = (
        "public_id",
        "short_content",
        "scope",
        "session_link",
        "occurred_at",
        "prototype",
    )
    list_filter = (ScopeFilter, ("recorded_at", DATE))
    search_fields = ("content", "scope", "session__id")
    ordering = ("-pk",)
    exclude = ("embedding", "salience")
    readonly_fields = ("salience_display",)

    @admin.display(description="content")
    def short_content(self, obj: Episode) -> str:
        return excerpt(obj.content)

    @admin.display(description="salience", ordering="salience")
    def salience_display(self, obj: Episode) -> str:
        return rounded(obj.salience)

    @admin.display(description="session")
    def session_link(self, obj: Episode) -> str:
        return admin_link(obj.session)


@admin.register(FeedbackEvent)
class FeedbackEventAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "retrieval_link",
        "target",
        "status",
        "rejection_reason",
        "assessment",
        "effect",
        "use",
        "coverage",
        "created_at",
    )
    list_filter = (
        "status",
        "target_kind",
        "assessment",
        "rejection_reason",
        "coverage",
        ("created_at", DATE),
    )
    search_fields = ("id", "target_id", "retrieval__id", "reason", "contribution")
    ordering = ("-created_at",)

    @admin.display(description="retrieval")
    def retrieval_link(self, obj: FeedbackEvent) -> str:
        return target_link("retrieval", obj.retrieval_id)

    @admin.display(description="target")
    def target(self, obj: FeedbackEvent) -> str:
        return target_link(obj.target_kind, obj.target_id)


@admin.register(Exposure)
class ExposureAdmin(ReadOnlyAdmin):
    list_display = ("retrieval_link", "target", "pathway", "currency", "rank", "page", "exposed_at")
    list_filter = ("target_kind", "pathway", "currency", ("exposed_at", DATE))
    search_fields = ("target_id", "retrieval__id")
    ordering = ("-exposed_at", "rank")

    @admin.display(description="retrieval")
    def retrieval_link(self, obj: Exposure) -> str:
        return target_link("retrieval", obj.retrieval_id)

    @admin.display(description="target")
    def target(self, obj: Exposure) -> str:
        return target_link(obj.target_kind, obj.target_id)


@admin.register(Support)
class SupportAdmin(ReadOnlyAdmin):
    list_display = (
        "pk",
        "memory_link",
        "kind",
        "event",
        "episode",
        "session",
        "scope",
        "weight_display",
    )
    list_filter = ("kind", ScopeFilter)
    search_fields = ("scope", "session__id")
    ordering = ("-pk",)
    exclude = ("weight",)
    readonly_fields = ("weight_display",)

    @admin.display(description="weight", ordering="weight")
    def weight_display(self, obj: Support) -> str:
        return rounded(obj.weight)

    @admin.display(description="memory")
    def memory_link(self, obj: Support) -> str:
        return admin_link(obj.memory)


@admin.register(Prototype)
class PrototypeAdmin(ReadOnlyAdmin):
    list_display = (
        "public_id",
        "scope",
        "support_count",
        "session_count",
        "medoid_episode",
        "memory",
        "updated_at",
    )
    list_filter = (ScopeFilter,)
    search_fields = ("scope",)
    ordering = ("-pk",)


@admin.register(Association)
class AssociationAdmin(ReadOnlyAdmin):
    list_display = ("pk", "src", "dst", "kind", "weight_display", "updated_at")
    list_filter = ("kind",)
    ordering = ("-weight",)
    exclude = ("weight",)
    readonly_fields = ("weight_display",)

    @admin.display(description="weight", ordering="weight")
    def weight_display(self, obj: Association) -> str:
        return rounded(obj.weight)


@admin.register(ForgetLog)
class ForgetLogAdmin(ReadOnlyAdmin):
    list_display = (
        "created_at",
        "action",
        "subject",
        "prior_status",
        "new_status",
        "actor",
        "short_reason",
    )
    list_filter = ("action", "actor", ("created_at", DATE))
    search_fields = ("reason", "actor", "procedure__id")
    ordering = ("-created_at", "-pk")

    @admin.display(description="memory / procedure")
    def subject(self, obj: ForgetLog) -> str:
        return admin_link(obj.memory or obj.procedure)

    @admin.display(description="reason")
    def short_reason(self, obj: ForgetLog) -> str:
        return excerpt(obj.reason, 80)


@admin.register(Continuity)
class ContinuityAdmin(ReadOnlyAdmin):
    list_display = ("id", "scope", "integration", "client_identity", "created_at", "last_seen_at")
    list_filter = (ScopeFilter,)
    search_fields = ("id", "scope", "client_identity")


@admin.register(Cursor)
class CursorAdmin(ReadOnlyAdmin):
    list_display = ("id", "retrieval", "page", "memory_offset", "procedure_offset")
    search_fields = ("id", "retrieval__id")


@admin.register(LearningApplication)
class LearningApplicationAdmin(ReadOnlyAdmin):
    list_display = ("retrieval", "target_kind", "target_id", "applied_event", "delta_display")
    list_filter = ("target_kind",)
    search_fields = ("target_id", "retrieval__id")
    exclude = ("applied_delta",)
    readonly_fields = ("delta_display",)

    @admin.display(description="applied delta", ordering="applied_delta")
    def delta_display(self, obj: LearningApplication) -> str:
        return rounded(obj.applied_delta, 3)
