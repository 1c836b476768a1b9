"""The one settings module: everything configurable comes from SLOWAVE_* variables."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from slowave_site.env import (
    SettingError,
    allowed_host_names,
    bracketed_host,
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_path,
    env_str,
    private_dir,
)

BASE_DIR = Path(__file__).resolve().parent.parent
SLOWAVE_HOME = env_path("SLOWAVE_HOME", Path.home() / ".slowave")
SLOWAVE_DB_PATH = env_path("SLOWAVE_DB_PATH", SLOWAVE_HOME / "slowave.sqlite3")


def _publish_new_key(key_file: Path) -> None:
    """Write a fresh key beside `key_file` and link it into place: several processes starting on a
    fresh home at once all end up reading the one key that won, never a half-written file."""
    draft = key_file.with_name(f".secret_key.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(50))
        try:
            os.link(draft, key_file)
        except FileExistsError:
            pass  # another process published its key first; everyone reads that one
    finally:
        draft.unlink(missing_ok=True)


def _secret_key() -> str:
    configured = os.environ.get("SLOWAVE_SECRET_KEY", "").strip()
    if configured:
        return configured
    private_dir("SLOWAVE_HOME", SLOWAVE_HOME)
    key_file = SLOWAVE_HOME / "secret_key"
    try:
        if not key_file.exists():
            _publish_new_key(key_file)
        return key_file.read_text().strip()
    except OSError as exc:
        raise SettingError(
            "SLOWAVE_HOME", f"must be a directory Slowave can write ({key_file}: {exc.strerror})"
        ) from None


def _postgres_database(url: str) -> dict[str, object]:
    import dj_database_url

    rule = "must be a PostgreSQL URL like postgresql://user@host:5432/dbname"
    # The value is never echoed back: it may hold a password.
    try:
        parsed = dj_database_url.parse(url, conn_max_age=0)
    except ValueError:  # its UnknownSchemeError and ParseError included
        raise SettingError("DATABASE_URL", rule + " (it does not parse)") from None
    if parsed.get("ENGINE") != "django.db.backends.postgresql":
        scheme = url.split(":", 1)[0]
        raise SettingError("DATABASE_URL", rule + f" (got scheme {scheme!r})")
    if not parsed.get("NAME"):
        raise SettingError("DATABASE_URL", rule + " (no database name)")
    return dict(parsed)


SECRET_KEY = _secret_key()
DEBUG = env_bool("SLOWAVE_DEBUG", False)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "memory",
    "consolidation",
    "mcp_bridge",
    # Last: its commands (up, worker) need the apps above; it has no models.
    "slowave_site",
]

MIDDLEWARE = [
    "memory.http.host_policy.host_policy_middleware",  # first: refuses foreign hosts
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "slowave_site.urls"
WSGI_APPLICATION = "slowave_site.wsgi.application"
ASGI_APPLICATION = "slowave_site.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

SLOWAVE_DB_BUSY_TIMEOUT_MS = env_int("SLOWAVE_DB_BUSY_TIMEOUT_MS", 5000, minimum=0)
DATABASE_URL = env_str("DATABASE_URL", "")

if DATABASE_URL:
    # No persistent connections: under ASGI each request runs in its own context and would
    # leave its connection open (Django's docs say to disable them there); `slowave bench
    # load` ran PostgreSQL out of connections ("too many clients") with conn_max_age=60.
    DATABASES = {"default": _postgres_database(DATABASE_URL)}
else:
    private_dir("SLOWAVE_DB_PATH", SLOWAVE_DB_PATH.parent)
    DATABASES = {
        "default": {
            "ENGINE": "slowave_site.db",
            "NAME": str(SLOWAVE_DB_PATH),
            "OPTIONS": {
                "timeout": SLOWAVE_DB_BUSY_TIMEOUT_MS / 1000,
                "transaction_mode": "IMMEDIATE",
                "init_command": (
                    "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
                    f"PRAGMA busy_timeout={SLOWAVE_DB_BUSY_TIMEOUT_MS}"
                ),
            },
            # Each thread keeps its connection (the HTTP pool's, the stdio server's one thread).
            # Opening one per call cost 2-20 ms: reading the schema again and, when the last
            # connection closed, a WAL checkpoint. Threads that end (a request of Django's own
            # views) drop theirs, which closes it; restore refuses while any process holds the
            # store, so no connection outlives the file it opened.
            "CONN_MAX_AGE": None,
            # One file per test process: concurrent test runs must not share a database.
            "TEST": {"NAME": str(SLOWAVE_HOME / f"test-slowave-{os.getpid()}.sqlite3")},
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = SLOWAVE_HOME / "static"
LOGIN_URL = "/admin/login/"

SLOWAVE_LOG_LEVEL = env_choice(
    "SLOWAVE_LOG_LEVEL", "WARNING", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
)
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"one_line_refusal": {"()": "slowave_site.log_filters.OneLineRefusal"}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "stream": "ext://sys.stderr"}},
    "loggers": {"django.request": {"filters": ["one_line_refusal"]}},
    "root": {"handlers": ["stderr"], "level": SLOWAVE_LOG_LEVEL},
}

# Memory behaviour (spec §3).
SLOWAVE_SESSION_IDLE_TIMEOUT = env_float("SLOWAVE_SESSION_IDLE_TIMEOUT", 3600.0)
SLOWAVE_REAPER_POLL_SECONDS = env_float("SLOWAVE_REAPER_POLL_SECONDS", 120.0, minimum=0)
SLOWAVE_CONSOLIDATE_INTERVAL = env_int("SLOWAVE_CONSOLIDATE_INTERVAL", 300, minimum=1)
SLOWAVE_DECAY_IDLE_DAYS = env_float("SLOWAVE_DECAY_IDLE_DAYS", 30.0, minimum=0)
SLOWAVE_DECAY_HALF_LIFE_DAYS = env_float("SLOWAVE_DECAY_HALF_LIFE_DAYS", 90.0)
# onnx: the model's ONNX export through ONNX Runtime (torch only for the export, once); onnx-int8:
# its int8 weights; sentence-transformers: torch, as before the export; hash: unit tests only.
SLOWAVE_EMBEDDER = env_choice(
    "SLOWAVE_EMBEDDER", "onnx", ("onnx", "onnx-int8", "sentence-transformers", "hash")
)
SLOWAVE_EMBEDDING_MODEL = env_str("SLOWAVE_EMBEDDING_MODEL", "")
# Where the ONNX export lives; every home may share one (it depends only on the model).
SLOWAVE_MODEL_DIR = env_path("SLOWAVE_MODEL_DIR", SLOWAVE_HOME / "models")
# ONNX Runtime threads per encode; 0: the usable cores, at most 4.
SLOWAVE_EMBEDDER_THREADS = env_int("SLOWAVE_EMBEDDER_THREADS", 0, minimum=0, maximum=64)
SLOWAVE_VECTOR_BACKEND = env_choice(
    "SLOWAVE_VECTOR_BACKEND", "auto", ("auto", "sqlite-vec", "numpy", "pgvector")
)
# Refused at start-up, not at the first search: pgvector and sqlite-vec tables each live in
# one engine. (Whether the server has the pgvector extension is known at the first search.)
if SLOWAVE_VECTOR_BACKEND == "pgvector" and not DATABASE_URL:
    raise SettingError("SLOWAVE_VECTOR_BACKEND=pgvector", "needs PostgreSQL (DATABASE_URL)")
if SLOWAVE_VECTOR_BACKEND == "sqlite-vec" and DATABASE_URL:
    raise SettingError("SLOWAVE_VECTOR_BACKEND=sqlite-vec", "needs SQLite, not DATABASE_URL")
SLOWAVE_MIN_RELEVANCE = env_float("SLOWAVE_MIN_RELEVANCE", 0.35, minimum=0, maximum=1)
SLOWAVE_RELATIVE_MARGIN = env_float("SLOWAVE_RELATIVE_MARGIN", 0.12, minimum=0, maximum=1)
SLOWAVE_HOST = env_str("SLOWAVE_HOST", "127.0.0.1")
SLOWAVE_PORT = env_int("SLOWAVE_PORT", 8765, minimum=1, maximum=65535)
# The names a request's Host (and a browser's Origin) may carry: loopback, SLOWAVE_HOST, and
# SLOWAVE_ALLOWED_HOSTS (comma-separated, Django patterns: `.example.com`, `*` for any).
# /api/ and /mcp refuse any other (memory.http.host_policy): DNS-rebinding protection.
SLOWAVE_ALLOWED_HOSTS = allowed_host_names("SLOWAVE_ALLOWED_HOSTS")
ALLOWED_HOSTS = sorted(
    {"localhost", "127.0.0.1", "[::1]", bracketed_host(SLOWAVE_HOST), *SLOWAVE_ALLOWED_HOSTS}
)
# Threads running agent calls over HTTP at once (MCP tool calls, /mcp token checks and the REST
# verbs share them); stdio uses one.
SLOWAVE_HTTP_WORKERS = env_int("SLOWAVE_HTTP_WORKERS", 4, minimum=1)
# Server processes of `slowave up` (its --workers default); 1 keeps a single process, see README.
SLOWAVE_UP_WORKERS = env_int("SLOWAVE_UP_WORKERS", 1, minimum=1)
SLOWAVE_API_TOKENS = [t.strip() for t in env_str("SLOWAVE_API_TOKENS", "").split(",") if t.strip()]
SLOWAVE_ALLOW_ANONYMOUS_LOCAL = env_bool("SLOWAVE_ALLOW_ANONYMOUS_LOCAL", True)
# A bearer token a Prometheus scraper may use for /metrics alone (the /api/ tokens work too).
SLOWAVE_METRICS_TOKEN = env_str("SLOWAVE_METRICS_TOKEN", "")
SLOWAVE_CLIENT_IDENTITY = env_str("SLOWAVE_CLIENT_IDENTITY", "")
SLOWAVE_EMBEDDED_WORKER = env_bool("SLOWAVE_EMBEDDED_WORKER", True)
SLOWAVE_TASKS_INLINE = env_bool("SLOWAVE_TASKS_INLINE", False)
SLOWAVE_BACKUP_DIR = env_path("SLOWAVE_BACKUP_DIR", SLOWAVE_HOME / "backups")
SLOWAVE_BACKUP_KEEP = env_int("SLOWAVE_BACKUP_KEEP", 7, minimum=1)
# The largest file `slowave import` and `POST /api/import` (its `content`) accept, in bytes.
SLOWAVE_IMPORT_MAX_BYTES = env_int("SLOWAVE_IMPORT_MAX_BYTES", 64 * 1024 * 1024, minimum=1)
# Text holding a credential (memory/secrets.py): refused, or stored with the secret replaced.
SLOWAVE_SECRETS = env_choice("SLOWAVE_SECRETS", "reject", ("reject", "redact"))

# Celery (spec §8.5): the filesystem transport keeps the default install free of Redis.
SLOWAVE_BROKER_URL = env_str("SLOWAVE_BROKER_URL", "")
SLOWAVE_BROKER_DIR = SLOWAVE_HOME / "broker"
CELERY_BROKER_URL = SLOWAVE_BROKER_URL or "filesystem://"
CELERY_TASK_ALWAYS_EAGER = SLOWAVE_TASKS_INLINE
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
