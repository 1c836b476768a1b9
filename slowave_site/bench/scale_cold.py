"""`bench scale`'s cold process: a fresh interpreter over the bench's store, timed from spawn to
its first recall, and its resident memory after a few more (what one server process costs).

    python -m slowave_site.bench.scale_cold --scope S [--recalls 20] [--with-model DIR]

The parent (`cold_start`) passes the store through the environment, as a server gets it
(DATABASE_URL, or SLOWAVE_DB_PATH for a SQLite file; SLOWAVE_EMBEDDER; SLOWAVE_VECTOR_BACKEND),
spawns this module, and reads one JSON line back. `--with-model`: the process also loads the
ONNX model from DIR and embeds one text before its first recall, as a server's warm-up does, so
the RSS holds the model's weights; the recalls still encode with the store's own embedder (the
bench's hash vectors: any other would be refused as a mismatch), which the model does not
change. The store's size shows in this RSS only where the vector backend keeps a copy of the
vectors in the process (numpy), never with pgvector.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

QUESTION = "What does the billing cache use?"


def _status_mb() -> dict[str, float]:
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = round(int(value.split()[0]) / 1024, 1)
    return fields


def _child(scope: str, recalls: int, model_dir: str | None) -> dict[str, Any]:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "slowave_site.settings")
    import django

    django.setup()
    if model_dir:
        from memory.embedders.export_files import export_directory
        from memory.embedders.onnx_runtime import OnnxEmbedder

        OnnxEmbedder(export_directory(Path(model_dir)), quantized=False).encode(["warm up"])
    from slowave_site.bench.scale_ask import ask

    first = ask(QUESTION, scope)
    first_at = time.time()
    later = [ask(f"{QUESTION} ({i})", scope)[1] for i in range(recalls)]
    return {
        "first_recall_at": first_at,
        "first_activate_ms": round(first[0], 1),
        "first_recall_ms": round(first[1], 1),
        "warm_recall_p50_ms": round(sorted(later)[len(later) // 2], 1) if later else None,
        **{"rss_mb" if k == "VmRSS" else "peak_rss_mb": v for k, v in _status_mb().items()},
    }


def cold_start(
    *, env: dict[str, str], scope: str, recalls: int = 20, model_dir: str | None = None
) -> dict[str, Any]:
    """Spawn a cold process over the store `env` names; seconds from spawn to its first recall
    (an activate, then the recall, as an agent's first task), its RSS after `recalls` more."""
    command = [sys.executable, "-m", "slowave_site.bench.scale_cold", "--scope", scope]
    command += ["--recalls", str(recalls)]
    if model_dir:
        command += ["--with-model", model_dir]
    spawned = time.time()
    done = subprocess.run(
        command,
        env={**os.environ, **env},
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the cold process failed: {done.stderr[-2000:]}")
    row = json.loads(done.stdout.strip().splitlines()[-1])
    row["spawn_to_first_recall_s"] = round(row.pop("first_recall_at") - spawned, 3)
    row["model_loaded"] = bool(model_dir)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m slowave_site.bench.scale_cold")
    parser.add_argument("--scope", required=True)
    parser.add_argument("--recalls", type=int, default=20)
    parser.add_argument("--with-model", help="SLOWAVE_MODEL_DIR whose ONNX export to load too")
    options = parser.parse_args(argv)
    print(json.dumps(_child(options.scope, options.recalls, options.with_model)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
