"""Suppress (forget) and restore (unforget) as admin actions and per-object buttons.

Every path calls memory.services.forgetting, the same services the CLI uses; nothing here writes
through the ORM. A reason is required to suppress, so both paths pass through a confirmation form.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.utils import quote
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone

from memory.errors import SlowaveError
from memory.services.forgetting import REASON_MAX, ControlResult, control_forget, control_unforget


class ReasonForm(forms.Form):
    reason = forms.CharField(
        max_length=REASON_MAX,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 70}),
        help_text=(
            "Why this should no longer be used. Kept in the forget log; restoring is possible."
        ),
    )


class ControlMixin:
    """Forget/unforget for a ModelAdmin whose rows have a public id (`public_ref`)."""

    control_template = "admin/memory/control_confirm.html"

    def public_ref(self, obj: Any) -> str:
        return str(obj)

    def control_urls(self) -> list[Any]:
        prefix = f"{self.opts.app_label}_{self.opts.model_name}"  # type: ignore[attr-defined]
        wrap = self.admin_site.admin_view  # type: ignore[attr-defined]
        return [
            path("<path:object_id>/forget/", wrap(self.forget_view), name=f"{prefix}_forget"),
            path("<path:object_id>/unforget/", wrap(self.unforget_view), name=f"{prefix}_unforget"),
        ]

    def _report(self, request: HttpRequest, run: Callable[[], ControlResult]) -> bool:
        try:
            result = run()
        except SlowaveError as exc:
            messages.error(request, exc.message)
            return False
        if result.changed:
            done = (
                f"Suppressed {result.ref}: agents no longer see it."
                if result.action == "forget"
                else f"Restored {result.ref} to {result.new_status}."
            )
            messages.success(request, done)
        else:
            messages.info(
                request, f"Nothing changed: {result.ref} was already {result.new_status}."
            )
        for warning in result.warnings:
            messages.warning(request, warning)
        return True

    def _forget(self, request: HttpRequest, obj: Any, reason: str) -> bool:
        return self._report(
            request,
            lambda: control_forget(
                ref=self.public_ref(obj),
                reason=reason,
                actor=request.user.get_username(),
                now=timezone.now(),
            ),
        )

    def _unforget(self, request: HttpRequest, obj: Any) -> bool:
        return self._report(
            request,
            lambda: control_unforget(
                ref=self.public_ref(obj), actor=request.user.get_username(), now=timezone.now()
            ),
        )

    def _object(self, request: HttpRequest, object_id: str) -> Any:
        """The object to control, or None when the URL names none (the caller then answers as
        Django's change view does: back to the index, saying so)."""
        if not self.has_control_permission(request):  # type: ignore[attr-defined]
            raise PermissionDenied
        return self.find(request, object_id)  # type: ignore[attr-defined]

    def _missing(self, request: HttpRequest, object_id: str) -> HttpResponse:
        return self._get_obj_does_not_exist_redirect(  # type: ignore[attr-defined]
            request,
            self.opts,  # type: ignore[attr-defined]
            object_id,
        )

    def _change_url(self, obj: Any) -> str:
        info = self.opts.app_label, self.opts.model_name  # type: ignore[attr-defined]
        return reverse("admin:{}_{}_change".format(*info), args=[quote(obj.pk)])

    def forget_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        obj = self._object(request, object_id)
        if obj is None:
            return self._missing(request, object_id)
        form = ReasonForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            self._forget(request, obj, form.cleaned_data["reason"])
            return HttpResponseRedirect(self._change_url(obj))
        return self._confirm(request, [obj], form, action=None)

    def unforget_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        obj = self._object(request, object_id)
        if obj is None:
            return self._missing(request, object_id)
        if request.method != "POST":
            return HttpResponseRedirect(self._change_url(obj))
        self._unforget(request, obj)
        return HttpResponseRedirect(self._change_url(obj))

    def _confirm(
        self, request: HttpRequest, objects: list[Any], form: ReasonForm, action: str | None
    ) -> TemplateResponse:
        context = {
            **self.admin_site.each_context(request),  # type: ignore[attr-defined]
            "title": "Suppress from agents' memory",
            "opts": self.opts,  # type: ignore[attr-defined]
            "objects": [
                (
                    obj,
                    self.public_ref(obj),
                    getattr(obj, "content", None) or getattr(obj, "summary", ""),
                )
                for obj in objects
            ],
            "form": form,
            "action": action,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, self.control_template, context)

    @admin.action(description="Suppress selected (forget, with a reason)", permissions=["control"])
    def suppress_selected(self, request: HttpRequest, queryset: Any) -> TemplateResponse | None:
        objects = list(queryset)
        form = ReasonForm(request.POST if "reason" in request.POST else None)
        if "reason" in request.POST and form.is_valid():
            for obj in objects:
                self._forget(request, obj, form.cleaned_data["reason"])
            return None
        return self._confirm(request, objects, form, action="suppress_selected")

    @admin.action(description="Restore selected (unforget)", permissions=["control"])
    def restore_selected(self, request: HttpRequest, queryset: Any) -> None:
        for obj in queryset:
            self._unforget(request, obj)
