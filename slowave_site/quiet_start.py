"""What `slowave up` says when it starts, and the chatter of its parts it keeps out.

Lives here: the one block `slowave up` prints (where the admin, REST docs, MCP and metrics
are, the worker's state, the database, how to stop), and the environment that silences the
progress bars of the libraries its children load. `slowave up --verbose` skips the silencing
(memory.management.commands.up decides; the Celery worker's banner and log level are
consolidation.scheduler's arguments). Warnings and errors are never silenced here.
"""

from __future__ import annotations

import os
import socket

from django.conf import settings

from memory.selectors.stats import database_label
from slowave_site.env import bracketed_host

# Progress bars and advisories of tqdm, huggingface_hub and transformers, which the model's
# one-time ONNX export (a child process) and the torch fallback load. setdefault: a person
# who set one of these keeps their choice.
_QUIET_LIBRARIES = {
    "TQDM_DISABLE": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
}


def silence_libraries() -> None:
    """Set in this process's environment, so every child `slowave up` starts inherits it."""
    for name, value in _QUIET_LIBRARIES.items():
        os.environ.setdefault(name, value)


def worker_state(*, started: bool, no_worker_flag: bool) -> str:
    if started:
        every = settings.SLOWAVE_CONSOLIDATE_INTERVAL
        return f"embedded, consolidating every {every} s"
    if settings.SLOWAVE_BROKER_URL:
        return "separate: start `celery -A slowave_site worker` and `beat` for SLOWAVE_BROKER_URL"
    if no_worker_flag:
        return "off (--no-worker): nothing consolidates until a worker runs"
    return "off (SLOWAVE_EMBEDDED_WORKER=false): nothing consolidates until a worker runs"


def start_block(*, host: str, port: int, workers: int, worker: str) -> str:
    """The lines `slowave up` prints once, before it serves."""
    base = f"http://{bracketed_host(host)}:{port}"
    served_by = f" ({workers} server processes)" if workers > 1 else ""
    lines = [
        f"Slowave is up{served_by}",
        f"  admin      {base}/admin/  (first login: slowave createadmin)",
        f"  REST docs  {base}/api/docs",
        f"  MCP        {base}/mcp",
        f"  metrics    {base}/metrics",
        f"  worker     {worker}",
        f"  database   {database_label()}",
        "Stop with Ctrl+C. Startup details: slowave up --verbose",
    ]
    return "\n".join(lines)


def port_taken(host: str, port: int) -> str | None:
    """Why `host:port` cannot be listened on (None if it can), checked before the block says
    Slowave is up: otherwise the block would be followed by uvicorn's bind error."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind((host, port))
        except OSError as exc:
            return exc.strerror or str(exc)
    return None
