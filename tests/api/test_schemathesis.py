"""Property-based fuzzing of the REST API with schemathesis, against a live `slowave up`.

schemathesis reads `/api/openapi.json` and sends valid and invalid requests to every route.
The run fails on any 5xx, on a status the route does not declare, on a response body that
does not match the declared envelope, and on schema-violating input the server accepts.
Tokens are required (no anonymous loopback), so a missing Authorization header is invalid
input too; the staff token reaches the staff routes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.api.live import Live, slowave_up
from tests.api.support import VERIFIED

CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
    "missing_required_header",
    "unsupported_method",
)
RUNNER = "import sys; from schemathesis.cli import schemathesis; sys.exit(schemathesis())"


def _seed(live: Live) -> None:
    """A committed session with a memory, so lists and details have rows to return."""
    scope = "project:fuzz"
    opened = live.call("activate", {"task": "seed", "initial_goal": "seed", "scope": scope})
    live.call(
        "remember",
        {
            "scope": scope,
            "session_id": opened["session_id"],
            "content": "The fuzz server listens on loopback only",
            "type": "fact",
        },
    )
    live.call(
        "feedback",
        {"retrieval_id": opened["retrieval_id"], "coverage": "complete"},
    )
    live.call(
        "commit",
        {
            "session_id": opened["session_id"],
            "final_goal": "seeded",
            "outcome": "success",
            "outcome_summary": "seeded",
            "verification": VERIFIED,
        },
    )


@pytest.mark.timeout(300)
def test_it_survives_schemathesis_without_server_errors_or_schema_violations(
    tmp_path: Path,
) -> None:
    with slowave_up(tmp_path) as live:
        _seed(live)
        run = subprocess.run(
            [
                sys.executable,
                "-c",
                RUNNER,
                "run",
                f"{live.base}/api/openapi.json",
                "--header",
                f"Authorization: Bearer {live.token}",
                "--checks",
                ",".join(CHECKS),
                "--phases",
                "coverage,fuzzing",
                "--max-examples",
                "15",
                "--seed",
                "20261130",
                "--workers",
                "2",
                "--request-timeout",
                "60",
                "--no-color",
            ],
            cwd=tmp_path,  # hypothesis keeps its example database in the working directory
            capture_output=True,
            text=True,
            timeout=240,
        )
    assert run.returncode == 0, run.stdout[-8000:] + run.stderr[-2000:]
    # Thousands of requests carried the staff token; the server log must not hold it.
    assert live.token not in (tmp_path / "up.log").read_text()
    assert " passed" in run.stdout and "failures" not in run.stdout.lower(), run.stdout[-4000:]
