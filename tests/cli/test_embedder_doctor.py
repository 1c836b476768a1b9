"""`slowave embedder` and `slowave doctor` say which embedder serves and how the export stands,
from its manifest: reporting never imports torch."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.runner import cli_env, run_python, slowave

DOCTOR = """
import json, sys
from memory.services.doctor import doctor_run
checks = {c.name: c.as_dict() for c in doctor_run(include_model=True)}
print(json.dumps({"checks": checks, "torch": "torch" in sys.modules}))
"""


def _checks(result) -> dict[str, dict[str, str]]:
    return {c["name"]: c for c in result.json()["data"]["checks"]}


def test_doctor_reports_the_onnx_embedder_and_its_export(home: Path) -> None:
    env = cli_env(home, SLOWAVE_EMBEDDER="onnx")
    result = slowave(home, "--json", "doctor", "--skip-model", env=env)
    assert result.code == 0, result.out + result.err
    checks = _checks(result)
    assert checks["embedder"]["status"] == "ok"
    assert "ONNX Runtime, fp32" in checks["embedder"]["detail"]
    export = checks["onnx export"]
    assert export["status"] == "ok" and "max |diff| vs torch fp32" in export["detail"]
    int8 = _checks(
        slowave(
            home, "--json", "doctor", "--skip-model", env=env | {"SLOWAVE_EMBEDDER": "onnx-int8"}
        )
    )
    assert "int8 weights" in int8["embedder"]["detail"]


def test_doctor_checks_the_model_through_onnx_without_torch(home: Path) -> None:
    report = json.loads(run_python(home, DOCTOR, env=cli_env(home, SLOWAVE_EMBEDDER="onnx")))
    model = report["checks"]["model"]
    assert model["status"] == "ok" and "via onnx: 384-d" in model["detail"], model
    assert report["torch"] is False


def test_doctor_warns_that_torch_serves_until_the_export_exists(home: Path, tmp_path: Path) -> None:
    env = cli_env(home, SLOWAVE_EMBEDDER="onnx", SLOWAVE_MODEL_DIR=str(tmp_path / "none"))
    result = slowave(home, "--json", "doctor", "--skip-model", env=env)
    assert result.code == 0, result.out + result.err  # warnings, not failures
    checks = _checks(result)
    assert checks["embedder"]["status"] == "warn" and "torch serves" in checks["embedder"]["detail"]
    export = checks["onnx export"]
    assert export["status"] == "warn" and "slowave embedder export" in export["detail"]
    assert not (tmp_path / "none").exists()  # doctor reports; it makes nothing


def test_embedder_status_and_export_leave_a_fresh_export_alone(home: Path) -> None:
    status = slowave(home, "--json", "embedder", "status")
    assert status.code == 0, status.err
    data = status.json()["data"]
    assert data["state"] == "fresh" and data["verification"]["fp32_max_abs_diff"] < 1e-5
    again = slowave(home, "embedder", "export")
    assert again.code == 0 and "Fresh export" in again.out and "Exporting" not in again.err


def test_embedder_status_exits_1_without_an_export(home: Path, tmp_path: Path) -> None:
    env = cli_env(home, SLOWAVE_MODEL_DIR=str(tmp_path / "none"))
    status = slowave(home, "--json", "embedder", "status", env=env)
    assert status.code == 1 and status.json()["data"]["state"] == "missing"
    assert "missing" in status.err


def test_setup_makes_the_export_the_configured_server_will_find(home: Path, tmp_path: Path) -> None:
    models = tmp_path / "models"
    env = cli_env(home, SLOWAVE_EMBEDDER="onnx", SLOWAVE_MODEL_DIR=str(models))
    project = tmp_path / "project"
    project.mkdir()
    wrote = slowave(
        home,
        "--json",
        "setup",
        "claude-code",
        "--write",
        "--dir",
        str(project),
        env=env,
        timeout=600,
    )
    assert wrote.code == 0, wrote.err
    data = wrote.json()["data"]
    assert data["onnx_export"] == "fresh" and "Exporting the embedding model" in wrote.err
    assert data["config"]["mcpServers"]["slowave"]["env"]["SLOWAVE_MODEL_DIR"] == str(models)
    status = slowave(home, "--json", "embedder", "status", env=env)
    assert status.code == 0 and status.json()["data"]["state"] == "fresh"
    again = slowave(home, "setup", "generic", env=env)
    assert again.code == 0 and "Exporting" not in again.err
    assert json.loads(again.out)["mcpServers"]["slowave"]["env"]["SLOWAVE_MODEL_DIR"]
