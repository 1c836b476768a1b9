"""URL map: the admin is the people's control panel; its dashboard sits under the same login.

Static files (the admin's CSS and JS) are served by the app itself, so `slowave up` under
uvicorn needs no separate web server or CDN and the pages work offline.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.contrib.staticfiles.views import serve as serve_static
from django.urls import include, path, re_path
from django.views.decorators.cache import cache_control

from memory.admin.dashboard import dashboard_view
from slowave_site.api import api
from slowave_site.api import fallback_urlpatterns as api_fallback_urls
from slowave_site.api import urlpatterns as api_extra_urls
from slowave_site.metrics import metrics_view


@cache_control(max_age=3600)
def _static(request, path: str):  # type: ignore[no-untyped-def]
    # insecure=True: Django refuses to serve static files outside DEBUG unless told to; for a
    # local single-user server this finder-backed view is the simplest offline option.
    return serve_static(request, path, insecure=True)


urlpatterns = [
    path("admin/dashboard/", admin.site.admin_view(dashboard_view), name="slowave-dashboard"),
    path("admin/", admin.site.urls),
    path("api/", include(api_extra_urls)),
    path("api/", api.urls),
    path("api/", include(api_fallback_urls)),
    path("metrics", metrics_view, name="slowave-metrics"),
    re_path(r"^{}(?P<path>.*)$".format(settings.STATIC_URL.lstrip("/")), _static),
]
