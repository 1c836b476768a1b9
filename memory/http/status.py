"""Error code → HTTP status: the only place one becomes the other (REST and `/mcp` alike)."""

from __future__ import annotations

HTTP_STATUS: dict[str, int] = {
    "invalid_input": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "origin_not_allowed": 403,
    "not_found": 404,
    "incomplete_feedback": 409,
    "embedder_mismatch": 409,
    "unsupported_media_type": 415,
    "host_not_allowed": 421,
    "storage_error": 500,
    "internal_error": 500,
    "storage_busy": 503,
    "storage_corrupt": 500,
    "storage_read_only": 503,
    "storage_full": 503,
    "storage_missing": 503,
}


def status_for(code: str) -> int:
    return HTTP_STATUS.get(code, 500)
