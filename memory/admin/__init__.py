"""The people's control panel (spec §10): every model, read-only, plus suppress/restore actions.

Registration happens on import of the submodules below; the dashboard view lives in
memory/admin/dashboard.py and is wired in slowave_site/urls.py under the admin's login.
"""

from __future__ import annotations

from django.contrib import admin

from memory.admin import memories, records, runs  # noqa: F401  (registers the model admins)

admin.site.site_header = "Slowave control panel"
admin.site.site_title = "Slowave"
admin.site.index_title = "Memory held for your agents"
