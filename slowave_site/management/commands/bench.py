"""`slowave bench locomo|longmemeval|memorycode PATH`: Slowave beside plain-RAG baselines on a
benchmark file; `scale`, `consolidate`, `load` and `window` measure speed. The runs live in
slowave_site/bench/*."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, cast

import dj_database_url
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connections
from rich.console import Console

from slowave_site.bench.embedders import MODES, measure_modes

EMBEDDERS = ["onnx", "onnx-int8", "sentence-transformers", "hash"]


class Command(BaseCommand):
    help = (
        "Benchmarks. locomo PATH: evidence recall and keyword hits vs BM25/dense/RRF baselines; "
        "longmemeval PATH: session/turn recall and NDCG vs the same baselines."
    )

    def add_arguments(self, parser) -> None:
        sub = parser.add_subparsers(dest="bench", required=True)
        locomo = sub.add_parser("locomo", help="LoCoMo retrieval benchmark (spec §13.1)")
        locomo.add_argument("path")
        _common(locomo)
        locomo.add_argument(
            "--sample",
            action="append",
            default=[],
            metavar="ID",
            help="only the conversation with this sample_id (repeatable; default: all)",
        )
        locomo.add_argument("--db", help="SQLite file to use (default: a temporary one)")
        locomo.add_argument(
            "--ingest",
            action="append",
            choices=["remember", "import"],
            help="how Slowave takes the conversations in (repeatable, each its own method): "
            "remember each turn as a fact (default; method slowave), or import each session "
            "as a transcript (method slowave-import)",
        )
        code = sub.add_parser(
            "memorycode", help="coding instructions updated across sessions (MemoryCode)"
        )
        code.add_argument("path")
        _common(code)
        code.add_argument(
            "--sample",
            action="append",
            default=[],
            metavar="ID",
            help="only the dialogue with this sample_id (repeatable; default: all)",
        )
        code.add_argument(
            "--half",
            choices=["tune", "confirm"],
            help="only the dialogues of one half (split by a hash of sample_id)",
        )
        lme = sub.add_parser("longmemeval", help="LongMemEval retrieval benchmark (S layout)")
        lme.add_argument("path")
        _common(lme)
        lme.add_argument(
            "--roles",
            choices=["user", "both"],
            default="user",
            help="turns indexed and counted as evidence (default: user, the official protocol)",
        )
        lme.add_argument(
            "--question",
            action="append",
            default=[],
            metavar="ID",
            help="only this scored question (repeatable; default: all scored)",
        )
        lme.add_argument("--limit", type=int, help="only the first N scored questions")
        lme.add_argument(
            "--pooled",
            action="store_true",
            help="every haystack session (deduplicated by id) in ONE scope, as one person's "
            "history; every question asked of that pool; adds BM25 over whole sessions",
        )
        scale = sub.add_parser("scale", help="ingest rate and lookup latency at size (spec §13.2)")
        scale.add_argument("--memories", type=int, required=True)
        scale.add_argument("--scopes", type=int, default=10)
        scale.add_argument("--queries", type=int, default=200)
        scale.add_argument("--embedder", choices=EMBEDDERS)
        scale.add_argument(
            "--vector-backend",
            choices=["sqlite-vec", "numpy", "pgvector"],
            help="vector index to measure (default: SLOWAVE_VECTOR_BACKEND)",
        )
        scale.add_argument(
            "--database-url",
            help="run on this PostgreSQL database instead of a SQLite file (its memories are "
            "the bench's: use a database of its own)",
        )
        scale.add_argument(
            "--db",
            help="SQLite file to use (default: a temporary one); one an earlier run filled is "
            "asked again without ingesting",
        )
        scale.add_argument("--out", help="write the JSON report here")
        scale.add_argument(
            "--no-cold-model",
            dest="cold_model",
            action="store_false",
            help="skip the cold process that also loads the ONNX model",
        )
        scale.add_argument(
            "--embedders",
            default="onnx-fp32,onnx-int8,torch",
            help="also measure these embedders, each in a fresh process, in the same run "
            "(comma-separated; '' for none)",
        )
        consolidate = sub.add_parser(
            "consolidate", help="clustering pass throughput (synthetic episodes)"
        )
        consolidate.add_argument("--episodes", type=int, required=True)
        consolidate.add_argument("--scopes", type=int, default=10)
        consolidate.add_argument("--out", help="write the JSON report here")
        window = sub.add_parser(
            "window", help="spawn-to-answer times and RSS of mcp_serve over a real stdio client"
        )
        window.add_argument(
            "--db",
            help="the store to serve (copied per variant); a missing file is built there with "
            "--memories (default: built in a temporary directory)",
        )
        window.add_argument(
            "--memories", type=int, default=10_000, help="size of a built store (bench scale's)"
        )
        window.add_argument("--runs", type=int, default=5, help="measured starts per variant")
        window.add_argument(
            "--against",
            metavar="REV",
            help="also spawn this git revision's checkout (a temporary worktree), alternately",
        )
        window.add_argument("--scope", default="project:scale-0", help="the scope the agent uses")
        window.add_argument(
            "--query", default="What does the billing queue use?", help="activate and recall cue"
        )
        window.add_argument("--out", help="write the JSON report here")
        load = sub.add_parser("load", help="concurrent agents' full cycles over MCP HTTP")
        load.add_argument("--agents", default="1,4,16", help="agent counts, one phase each")
        load.add_argument("--cycles", type=int, default=64, help="cycles per phase, shared out")
        load.add_argument("--embedder", choices=EMBEDDERS, default="sentence-transformers")
        load.add_argument("--database-url", help="DATABASE_URL for the server (e.g. PostgreSQL)")
        load.add_argument("--worker", action="store_true", help="run the embedded worker too")
        load.add_argument(
            "--floor",
            action="store_true",
            help="also drive a no-work MCP server and report Slowave's cycles/s as a share of it",
        )
        load.add_argument(
            "--workers", type=int, default=1, help="server processes (slowave up --workers)"
        )
        load.add_argument("--out", help="write the JSON report here")

    def handle(self, *args, **options) -> None:
        if options["bench"] == "scale":
            return self._scale(options)
        if options["bench"] == "consolidate":
            return self._consolidate_bench(options)
        if options["bench"] == "load":
            return self._load(options)
        if options["bench"] == "window":
            return self._window(options)
        if options["bench"] == "longmemeval":
            return self._longmemeval(options)
        if options["bench"] == "memorycode":
            return self._memorycode(options)
        self._locomo(options)

    def _consolidate_bench(self, options) -> None:
        from slowave_site.bench.clustering import run

        try:
            report = run(options["episodes"], scopes=options["scopes"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self._emit(report, options["out"])

    def _load(self, options) -> None:
        from slowave_site.bench.load import parse_agents, run_load
        from slowave_site.bench.load_report import print_load
        from slowave_site.bench.report import write_json

        try:
            agents = parse_agents(options["agents"], options["cycles"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        try:
            report = run_load(
                agents=agents,
                cycles=options["cycles"],
                embedder=options["embedder"],
                database_url=options["database_url"],
                worker=options["worker"],
                floor=options["floor"],
                workers=options["workers"],
                log=lambda m: self.stderr.write(m),
            )
        except RuntimeError as exc:  # the server did not start; the message carries its log
            raise CommandError(str(exc)) from exc
        if options["out"]:
            write_json(options["out"], report)
        # Wide enough for the floor rows and the share column when stdout is not a terminal.
        print_load(report, Console(file=cast(IO[str], self.stdout), width=110))
        if not report["ok"]:
            raise CommandError("load bench failed: " + "; ".join(report["failures"]))

    def _window(self, options) -> None:
        from slowave_site.bench.report import write_json
        from slowave_site.bench.window_run import format_window, run_window_bench

        if options["runs"] < 1 or options["memories"] < 1:
            raise CommandError("--runs and --memories must be positive")
        try:
            report = run_window_bench(
                db=options["db"],
                memories=options["memories"],
                runs=options["runs"],
                against=options["against"],
                scope=options["scope"],
                query=options["query"],
                build=_build_scale_store,
                log=lambda m: self.stderr.write(m),
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise CommandError(str(exc)) from exc
        if options["out"]:
            write_json(options["out"], report)
        self.stdout.write(format_window(report))

    def _emit(self, report, out: str | None) -> None:
        import json

        text = json.dumps(report, indent=2, default=str)
        if out:
            Path(out).write_text(text + "\n")
        self.stdout.write(text)

    def _scale(self, options) -> None:
        from slowave_site.bench.scale import run_scale

        if options["memories"] < 1 or options["scopes"] < 1 or options["queries"] < 1:
            raise CommandError("--memories, --scopes and --queries must be positive")
        if options["embedder"]:
            settings.SLOWAVE_EMBEDDER = options["embedder"]
        url, backend = options["database_url"], options["vector_backend"]
        if url and options["db"]:
            raise CommandError("--db names a SQLite file, --database-url PostgreSQL: give one")
        if backend == "pgvector" and not url or backend == "sqlite-vec" and url:
            raise CommandError(
                f"--vector-backend {backend} needs {'SQLite' if url else 'PostgreSQL'}"
            )
        if backend:
            settings.SLOWAVE_VECTOR_BACKEND = backend
        if url:
            _use_postgres(url)
        else:
            _use_scratch_database(options["db"])
        modes = tuple(m.strip() for m in options["embedders"].split(",") if m.strip())
        unknown = sorted(set(modes) - set(MODES))
        if unknown:
            raise CommandError(f"--embedders: unknown {', '.join(unknown)}; one of {MODES}")
        try:
            report = run_scale(
                memories=options["memories"],
                scopes=options["scopes"],
                queries=options["queries"],
                cold_env=_cold_env(url),
                model_dir=_model_dir() if options["cold_model"] else None,
                log=lambda m: self.stderr.write(m),
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if modes:
            self.stderr.write(f"measuring embedders: {', '.join(modes)}")
            report["embedders"], skipped = measure_modes(
                Path(settings.SLOWAVE_MODEL_DIR),
                modes=modes,
                source=settings.SLOWAVE_EMBEDDING_MODEL,
                log=lambda m: self.stderr.write(m),
            )
            if skipped:
                report["embedders_skipped"] = skipped
        self._emit(report, options["out"])

    def _locomo(self, options) -> None:
        from slowave_site.bench.locomo_run import run_locomo_bench
        from slowave_site.bench.report import print_report

        self._dataset(
            options,
            lambda log: run_locomo_bench(
                options["path"],
                samples=options["sample"],
                db=options["db"],
                ingest=options["ingest"] or ["remember"],
                log=log,
                **_shared(options),
            ),
            print_report,
        )

    def _memorycode(self, options) -> None:
        from slowave_site.bench.memorycode import print_report, run_memorycode

        self._dataset(
            options,
            lambda log: run_memorycode(
                options["path"],
                samples=options["sample"],
                half=options["half"],
                log=log,
                **_shared(options),
            ),
            print_report,
        )

    def _longmemeval(self, options) -> None:
        from slowave_site.bench.longmemeval import run_longmemeval
        from slowave_site.bench.longmemeval_report import print_report

        self._dataset(
            options,
            lambda log: run_longmemeval(
                options["path"],
                roles=options["roles"],
                questions=options["question"],
                limit=options["limit"],
                pooled=options["pooled"],
                log=log,
                **_shared(options),
            ),
            print_report,
        )

    def _dataset(self, options, run: Callable[[Any], Any], show: Callable[..., None]) -> None:
        """A dataset bench: progress on stderr, a bad file as one line, the tables on stdout."""
        self._check_path(options["path"])
        try:
            report = run(Console(stderr=True).log)
        except (OSError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        show(report, Console(file=cast(IO[str], self.stdout)))

    def _check_path(self, path: str) -> None:
        if not Path(path).is_file():
            raise CommandError(f"no such file: {path}")


def _common(parser) -> None:
    """The options locomo and longmemeval share."""
    parser.add_argument("--baseline", action="append", default=[], choices=["bm25", "dense", "rrf"])
    parser.add_argument("--no-slowave", action="store_true", help="run only the baselines")
    parser.add_argument(
        "--no-consolidate",
        action="store_true",
        help="skip the consolidation pass between ingest and questions",
    )
    parser.add_argument(
        "--store",
        metavar="DIR",
        help="keep the ingested store in DIR and reuse it when its manifest matches",
    )
    parser.add_argument(
        "--rebuild", action="store_true", help="with --store: ingest again into a fresh store"
    )
    parser.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="rank the questions with this policy value changed (repeatable; see "
        "memory/retrieval/policy.py)",
    )
    parser.add_argument("--out", help="write the JSON report here")
    parser.add_argument("--details", action="store_true", help="per-question rows in the JSON")


def _shared(options) -> dict:
    return {
        "baselines": options["baseline"],
        "slowave": not options["no_slowave"],
        "consolidate": not options["no_consolidate"],
        "store": options["store"],
        "rebuild": options["rebuild"],
        "policy": options["policy"],
        "out": options["out"],
        "details": options["details"],
    }


def _build_scale_store(path: Path, memories: int, log: Callable[[str], None]) -> None:
    """A store of `memories` synthetic claims at `path`, as `bench scale` ingests them."""
    from slowave_site.bench.scale import ingest_synthetic

    _use_scratch_database(str(path))
    ingest_synthetic(memories=memories, log=log)
    connections["default"].close()


def _cold_env(url: str | None) -> dict[str, str]:
    """What names the bench's store to a cold process: the settings a server reads."""
    env = {
        "SLOWAVE_EMBEDDER": settings.SLOWAVE_EMBEDDER,
        "SLOWAVE_VECTOR_BACKEND": settings.SLOWAVE_VECTOR_BACKEND,
    }
    if url:
        return {**env, "DATABASE_URL": url}
    return {**env, "SLOWAVE_DB_PATH": str(connections["default"].settings_dict["NAME"])}


def _model_dir() -> str | None:
    """SLOWAVE_MODEL_DIR when it holds the ONNX export (the cold process loads it), else None."""
    from memory.embedders.export_files import export_directory

    model_dir = Path(settings.SLOWAVE_MODEL_DIR)
    return str(model_dir) if (export_directory(model_dir) / "model.onnx").exists() else None


def _use_postgres(url: str) -> None:
    """Point the default connection at the PostgreSQL database `url` names, and migrate it."""
    parsed = dj_database_url.parse(url, conn_max_age=0)
    if parsed.get("ENGINE") != "django.db.backends.postgresql" or not parsed.get("NAME"):
        raise CommandError("--database-url must read postgresql://user@host:5432/dbname")
    connections["default"].close()
    del connections["default"]  # the next use builds a PostgreSQL connection from these
    connections.settings["default"] = connections.configure_settings({"default": parsed})["default"]
    settings.DATABASES["default"] = connections.settings["default"]
    call_command("migrate", verbosity=0)


def _use_scratch_database(path: str | None) -> None:
    """Point the default connection at a bench-only SQLite file: never the user's memory."""
    target = path or str(Path(tempfile.mkdtemp(prefix="slowave-bench-")) / "bench.sqlite3")
    connections["default"].close()
    connections["default"].settings_dict["NAME"] = target
    call_command("migrate", verbosity=0)
