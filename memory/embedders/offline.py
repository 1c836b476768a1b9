"""Keep the model libraries off the network, set before any of them is imported.

ONNX Runtime 1.32's Linux wheel records telemetry on import (queued under
~/.cache/Microsoft/DeveloperTools/.onnxruntime for upload to Microsoft's collector) unless
ORT_DISABLE_TELEMETRY is set first; its disable_telemetry_events() comes too late. Hugging Face
libraries are told never to look for a newer model.
"""

from __future__ import annotations

import os

OFFLINE = {"ORT_DISABLE_TELEMETRY": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def stay_offline() -> None:
    """In this process and every child it starts (the export runs in one)."""
    os.environ.update(OFFLINE)
