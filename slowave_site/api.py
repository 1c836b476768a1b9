"""The one NinjaAPI (spec §12): error → HTTP status mapping, OpenAPI extras, offline docs.

Lives here: exception handlers that answer with the MCP envelope (the status from
memory.http.status, the one table), the request-body and reply components of the routes, a
Swagger page whose assets come from ninja's own package (no CDN, works offline),
the not_found envelope for every `/api/` path no route takes, and the envelope for a method
a route does not take (ninja's own 405 is plain text).
Does not live here: routes (memory.api), auth decisions (memory.services.tokens), the
Host/Origin/Content-Type rule applied before any route (memory.http.host_policy).
"""

from __future__ import annotations

import functools
import logging
import mimetypes
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ninja
from asgiref.sync import iscoroutinefunction
from django.http import FileResponse, HttpRequest, HttpResponse
from django.urls import URLPattern, URLResolver, path, re_path
from django.views.decorators.csrf import csrf_exempt
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError
from ninja.errors import ValidationError as NinjaValidationError
from ninja.openapi.docs import DocsBase
from pydantic import BaseModel

from memory.api import BODY_MODELS, REF_TEMPLATE, REPLY_MODELS, router
from memory.errors import (
    STORAGE_FAULTS,
    InvalidInput,
    NotFound,
    SlowaveError,
    as_slowave_error,
)
from memory.http.status import status_for
from memory.services.tokens import Unauthorized

logger = logging.getLogger(__name__)

JSON = "application/json"
_ASSETS = Path(ninja.__file__).parent / "static" / "ninja"
_DOC_ASSETS = {"swagger-ui.css", "swagger-ui-bundle.js", "swagger-ui-init.js", "favicon.png"}


class SlowaveAPI(NinjaAPI):
    """Adds the pydantic request-body and reply models to the OpenAPI components.

    The agent verbs read their raw body themselves (so bad JSON yields our invalid_input
    envelope, exactly as over MCP); their requestBody therefore `$ref`s these components
    instead of coming from a typed view parameter. Likewise each route's 200 reply `$ref`s
    the model describing its `data`, which ninja does not re-serialize (memory.api.replies).
    """

    component_models: tuple[type[BaseModel], ...] = ()

    def get_openapi_schema(self, **kwargs: Any) -> Any:
        schema = super().get_openapi_schema(**kwargs)
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        ours: dict[str, Any] = {}
        for model in self.component_models:
            component = model.model_json_schema(ref_template=REF_TEMPLATE)
            for name, sub in [*component.pop("$defs", {}).items(), (model.__name__, component)]:
                # Two shapes of one name would share a component: one route's schema wrong.
                if ours.setdefault(name, sub) != sub:
                    raise TypeError(f"two reply or body shapes are named {name}; rename one")
        components.update(ours)
        return schema

    def _get_urls(self) -> list[URLResolver | URLPattern]:
        urls = super()._get_urls()
        for url in urls:
            if isinstance(url, URLPattern):
                url.callback = _method_enveloped(url.callback)
        return urls


def _method_enveloped(view: Callable[..., Any]) -> Callable[..., Any]:
    """`view`, answering a method its path does not take with the envelope (405, Allow kept)
    instead of ninja's plain-text `Method not allowed`."""

    def enveloped(request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if response.status_code != 405 or response.get("Content-Type", "").startswith(JSON):
            return response
        allowed = response.get("Allow", "")
        error = InvalidInput(
            f"method {request.method} is not allowed on {request.path[:200]}; it takes {allowed}"
        )
        replaced = api.create_response(
            request, {"ok": False, "error": error.as_error()}, status=405
        )
        replaced["Allow"] = allowed
        return replaced

    if iscoroutinefunction(view):

        @functools.wraps(view)  # keeps ninja's csrf_exempt mark
        async def async_view(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            return enveloped(request, await view(request, *args, **kwargs))

        return async_view

    @functools.wraps(view)
    def sync_view(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return enveloped(request, view(request, *args, **kwargs))

    return sync_view


class OfflineSwagger(DocsBase):
    """ninja's Swagger page with its bundled assets served by `docs_asset` below."""

    def render_page(self, request: HttpRequest, api: NinjaAPI, **kwargs: Any) -> HttpResponse:
        base = request.path.rsplit("/docs", 1)[0] + "/docs-assets/"
        url = self.get_openapi_url(api, kwargs)
        html = f"""<!DOCTYPE html><html><head><title>{api.title}</title>
<link rel="stylesheet" href="{base}swagger-ui.css"><link rel="icon" href="{base}favicon.png">
</head><body data-csrf-token="" data-api-csrf="">
<script type="application/json" id="swagger-settings">
{{"layout": "BaseLayout", "deepLinking": true, "url": "{url}"}}
</script><div id="swagger-ui"></div>
<script src="{base}swagger-ui-bundle.js"></script><script src="{base}swagger-ui-init.js"></script>
</body></html>"""
        return HttpResponse(html)


def docs_asset(request: HttpRequest, name: str) -> HttpResponse | FileResponse:
    if name not in _DOC_ASSETS:
        return not_found(request)
    content_type, _ = mimetypes.guess_type(name)
    return FileResponse((_ASSETS / name).open("rb"), content_type=content_type)


@csrf_exempt  # as ninja's routes are: a POST here must get this envelope, not CSRF's HTML 403
def not_found(request: HttpRequest, rest: str = "") -> HttpResponse:
    """Any `/api/` path no route takes (an id with `%2F` in it included): the envelope, not
    Django's HTML page."""
    error = NotFound(
        f"no route {request.method} {request.path[:200]}; the routes are listed at /api/docs"
    )
    return error_response(request, error)


api = SlowaveAPI(
    title="Slowave",
    version="1",
    description="Local long-term memory for agents: the MCP verbs over HTTP, plus read-only "
    "inspection and staff controls. Errors use the MCP envelope.",
    urls_namespace="slowave-api",
    docs=OfflineSwagger(),
)


def error_response(request: HttpRequest, error: SlowaveError) -> HttpResponse:
    return api.create_response(
        request, {"ok": False, "error": error.as_error()}, status=status_for(error.code)
    )


@api.exception_handler(Exception)
def _on_exception(request: HttpRequest, exc: Exception) -> HttpResponse:
    error = as_slowave_error(exc)
    if error.code == "internal_error":
        logger.error("%s %s failed", request.method, request.path, exc_info=exc)
    elif isinstance(error, STORAGE_FAULTS):
        # One line per call: the fault is named, a traceback would only repeat it.
        cause = exc.__cause__ or exc
        logger.error("%s %s: %s (%s)", request.method, request.path, error.code, cause)
    return error_response(request, error)


@api.exception_handler(NinjaValidationError)
def _on_ninja_validation(request: HttpRequest, exc: NinjaValidationError) -> HttpResponse:
    # Only query/path parameters reach ninja's validation; bodies go through parse_input.
    field_errors = [
        {"path": ".".join(str(p) for p in e["loc"][1:]) or str(e["loc"][0]), "message": e["msg"]}
        for e in exc.errors
    ]
    message = "; ".join(f"{f['path']}: {f['message']}" for f in field_errors)
    return error_response(request, InvalidInput(message, field_errors=field_errors))


@api.exception_handler(AuthenticationError)
def _on_auth(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return error_response(request, Unauthorized("a bearer token is required"))


@api.exception_handler(HttpError)
def _on_http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    error = SlowaveError(str(exc))
    error.code = {404: "not_found", 405: "invalid_input"}.get(exc.status_code, "internal_error")
    return api.create_response(
        request, {"ok": False, "error": error.as_error()}, status=exc.status_code
    )


api.add_router("", router)
api.component_models = BODY_MODELS + REPLY_MODELS

urlpatterns = [
    path("docs-assets/<str:name>", docs_asset, name="slowave-api-docs-asset"),
    # Before ninja's own root view, whose 404 is an HTML page (ninja still reverses its URL).
    path("", not_found, name="slowave-api-root"),
]
# Mounted under `api/` after the routes: whatever they leave.
fallback_urlpatterns = [re_path(r"^(?P<rest>.*)$", not_found, name="slowave-api-not-found")]
