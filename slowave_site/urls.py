"""URL map: the admin is the people's control panel; its dashboard sits under the same login.

Static files (the admin's CSS and JS) are served by the app itself, so `slowave up` under
uvicorn needs no separate web server or CDN and the pages work offline.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.urls import include, path, re_path

from memory.admin.dashboard import dashboard_view
from slowave_site.api import api
from slowave_site.api import fallback_urlpatterns as api_fallback_urls
from slowave_site.api import urlpatterns as api_extra_urls
from slowave_site.metrics import metrics_view
from slowave_site.site_views import favicon_view, home_view, static_view

urlpatterns = [
    path("", home_view, name="slowave-home"),
    path("favicon.ico", favicon_view, name="slowave-favicon"),
    path("admin/dashboard/", admin.site.admin_view(dashboard_view), name="slowave-dashboard"),
    path("admin/", admin.site.urls),
    path("api/", include(api_extra_urls)),
    path("api/", api.urls),
    path("api/", include(api_fallback_urls)),
    path("metrics", metrics_view, name="slowave-metrics"),
    re_path(r"^{}(?P<path>.*)$".format(settings.STATIC_URL.lstrip("/")), static_view),
]
