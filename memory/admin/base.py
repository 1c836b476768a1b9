"""Shared admin pieces: read-only base class, id links, scope and date filters."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin.utils import quote, unquote
from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString


class ReadOnlyAdmin(admin.ModelAdmin):
    """Records are evidence: people browse them, and change them only through actions."""

    list_per_page = 50
    show_full_result_count = False  # exact counts over the event log get slow; pages need none

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_control_permission(self, request: HttpRequest) -> bool:
        """Who may suppress, restore or reset: staff holding the model's change permission."""
        return request.user.has_perm(f"{self.opts.app_label}.change_{self.opts.model_name}")

    def find(self, request: HttpRequest, object_id: str) -> Any:
        """The object a URL names. The admin's links quote a public id (`_` becomes `_5F`), so
        the id is unquoted first, as Django's own change view does; None when there is none."""
        return self.get_object(request, unquote(object_id))

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # no permanent delete (spec §15)
        return actions


def admin_link(obj: Any, label: str | None = None) -> SafeString | str:
    """A link to an object's admin page, labelled with its public id."""
    if obj is None:
        return "—"
    text = label or str(obj)
    try:
        url = reverse(
            f"admin:{obj._meta.app_label}_{obj._meta.model_name}_change", args=[quote(obj.pk)]
        )
    except NoReverseMatch:
        return text
    return format_html('<a href="{}">{}</a>', url, text)


def ref_link(model_name: str, pk: Any, label: str) -> SafeString:
    url = reverse(f"admin:memory_{model_name}_change", args=[quote(pk)])
    return format_html('<a href="{}">{}</a>', url, label)


def target_link(kind: str, target_id: str) -> SafeString | str:
    """Exposure and feedback targets are stored as public ids; link them to their pages."""
    if kind == "memory" and target_id.startswith("sch_") and target_id[4:].isdigit():
        return ref_link("memory", int(target_id[4:]), target_id)
    if kind == "procedure":
        return ref_link("procedure", target_id, target_id)
    if kind == "retrieval":
        return ref_link("retrieval", target_id, target_id)
    return target_id


class ScopeFilter(admin.SimpleListFilter):
    """Filter on the scopes present in this table (scopes are free text, not a choice list)."""

    title = "scope"
    parameter_name = "scope"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        scopes = (
            model_admin.model.objects.values_list("scope", flat=True).distinct().order_by("scope")
        )
        return [(scope, scope) for scope in scopes[:200]]

    def queryset(self, request: HttpRequest, queryset: Any) -> Any:
        return queryset.filter(scope=self.value()) if self.value() else queryset


def rounded(value: float | None, places: int = 2) -> str:
    """A score or weight as people read it: 0.90, not 0.8999999999999999."""
    return "—" if value is None else f"{value:.{places}f}"


def excerpt(text: str, limit: int = 90) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def redaction_rows(redactions: dict[str, dict[str, int]]) -> list[tuple[str, str]]:
    """(field path, "AWS access key ×1, …"): what SLOWAVE_SECRETS=redact replaced, for display."""
    return [
        (path, ", ".join(f"{kind} ×{count}" for kind, count in sorted(kinds.items())))
        for path, kinds in sorted((redactions or {}).items())
    ]
