"""The site's own small pages: `/` (to the control panel), the favicon, and static files.

`slowave up` promises warnings and errors only, so none of these may log on an ordinary page
load: static files are answered whole, not streamed (Django's ASGI handler warns about a
streaming reply whose iterator is synchronous, as a FileResponse's is), and the favicon exists.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

from django.contrib.staticfiles.views import serve as serve_static
from django.http import FileResponse, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.views.decorators.cache import cache_control

# A small wave mark in the admin's colours; SVG, so one file serves every size.
FAVICON_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">'
    '<rect width="32" height="32" rx="6" fill="#417690"/>'
    '<path d="M4 19c4 0 4-6 8-6s4 6 8 6 4-6 8-6" fill="none" stroke="#f5dd5d" '
    'stroke-width="3" stroke-linecap="round"/></svg>'
)


def home_view(request: HttpRequest) -> HttpResponse:
    """`/` (the admin's "View site" link) leads to the control panel."""
    return HttpResponseRedirect(reverse("admin:index"))


@cache_control(max_age=86400)
def favicon_view(request: HttpRequest) -> HttpResponse:
    return HttpResponse(FAVICON_SVG, content_type="image/svg+xml")


@cache_control(max_age=3600)
def static_view(request: HttpRequest, path: str) -> HttpResponse:
    # insecure=True: Django refuses to serve static files outside DEBUG unless told to; for a
    # local single-user server this finder-backed view is the simplest offline option.
    reply = serve_static(request, path, insecure=True)
    if not isinstance(reply, FileResponse):  # a 304 Not Modified
        return reply
    # The admin's files are small: read here, in the view's thread, and answer them whole.
    body = b"".join(cast(Iterable[bytes], reply.streaming_content))
    whole = HttpResponse(body, status=reply.status_code)
    for header, value in reply.items():
        whole[header] = value
    reply.close()
    return whole
