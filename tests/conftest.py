"""Session-wide: the one ONNX export every real-model test serves from.

Made once per SLOWAVE_MODEL_DIR (under CI's fresh SLOWAVE_HOME: once per run), in a child
process so this one never imports torch for it. Each test server gets its own SLOWAVE_HOME;
the helpers that start them pass SLOWAVE_MODEL_DIR on, so none pays a first-start export.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session", autouse=True)
def onnx_export() -> Path:
    from django.conf import settings

    from memory.services.embedder_export import embedder_export_status

    model_dir = Path(settings.SLOWAVE_MODEL_DIR)
    if not embedder_export_status().fresh:
        made = subprocess.run(
            [sys.executable, "-m", "memory.embedders.export", "--models", str(model_dir)],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert made.returncode == 0, made.stderr[-3000:]
    os.environ["SLOWAVE_MODEL_DIR"] = str(model_dir)
    return model_dir
