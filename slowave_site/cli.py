"""The `slowave` console script: a thin front for the management commands (spec §11).

Global options come before the command: `--db PATH` (must be set before Django reads its
settings) and `--json` (passed to the command). Exit codes: 0 ok, 1 failure, 2 usage (a
malformed SLOWAVE_* variable included: one line naming it, no traceback).
"""

from __future__ import annotations

import os
import sys

COMMANDS: dict[str, tuple[str, str]] = {
    "up": ("up", "migrate, start the background worker, serve the admin"),
    "mcp-serve": ("mcp_serve", "the MCP server over stdio (what agents start)"),
    "worker": ("worker", "run background passes (--once: all passes, then exit)"),
    "consolidate": ("consolidate", "run the consolidation passes now"),
    "decay": ("decay", "apply salience decay (--now ISO, --dry-run)"),
    "reap": ("reap", "close idle sessions"),
    "show": ("show", "any id with its evidence chain"),
    "explain": ("explain", "why each item of a retrieval ranks where it does (--all)"),
    "forget": ("forget", "suppress a memory or procedure (--reason required)"),
    "unforget": ("unforget", "restore a forgotten memory or procedure"),
    "stats": ("stats", "counts per entity and scope"),
    "doctor": ("doctor", "check the installation and database"),
    "embedder": ("embedder", "the ONNX export of the embedding model: export, status"),
    "backup": ("backup", "online, checked, gzipped backup with rotation"),
    "restore": ("restore", "replace the database with a backup (--yes)"),
    "import": ("import", "import transcripts (JSONL) or a Slowave export"),
    "export": ("export", "export scopes as JSONL"),
    "bench": ("bench", "retrieval and speed benchmarks (locomo, scale, load, window, ...)"),
    "createadmin": ("createadmin", "create an admin login"),
    "setup": ("setup", "MCP configuration for claude-code, cursor, generic; --hooks"),
    "token": ("token", "API tokens for /api/ and /mcp: create, revoke, list"),
    "hook": ("hook", "Claude Code / Codex hooks: session-start, prompt, stop (JSON on stdin)"),
    "scope": ("scope", "the scope of a directory: one per git repository"),
    "migrate": ("migrate", "apply database migrations"),
}
# Commands that take --json themselves; for the rest a global --json is a usage error.
JSON_COMMANDS = {
    "show",
    "explain",
    "forget",
    "unforget",
    "stats",
    "doctor",
    "embedder",
    "backup",
    "restore",
    "import",
    "export",
    "createadmin",
    "setup",
    "token",
    "scope",
}


def usage() -> str:
    lines = ["usage: slowave [--db PATH] [--json] COMMAND [options]", "", "commands:"]
    lines += [f"  {name:<12} {text}" for name, (_, text) in COMMANDS.items()]
    lines += ["", "`slowave COMMAND --help` describes a command's options."]
    return "\n".join(lines)


def _fail(message: str) -> None:
    print(f"slowave: {message}\n\n{usage()}", file=sys.stderr)
    raise SystemExit(2)


def parse_globals(args: list[str]) -> tuple[str | None, bool, list[str]]:
    """Split `[--db PATH] [--json]` off the front; the rest is the command and its arguments."""
    db, as_json = None, False
    while args and args[0].startswith("--"):
        option = args.pop(0)
        if option == "--json":
            as_json = True
        elif option == "--db" and args:
            db = args.pop(0)
        elif option.startswith("--db="):
            db = option.split("=", 1)[1]
        elif option == "--help":
            print(usage())
            raise SystemExit(0)
        else:
            _fail(f"unknown option {option}")
    return db, as_json, args


# A hook's hard limit in seconds: reads answer before the prompt goes out, the capture after.
HOOK_TIMEOUTS = {"session-start": 10, "prompt": 10, "stop": 30}


def _hook_in_process(args: list[str], raw: str) -> None:
    """The hook with Django in this process: the services called directly, without the
    management command's machinery (its usage and --help stay the command's)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "slowave_site.settings")
    from slowave_site.env import settings_or_exit

    settings_or_exit()
    if len(args) != 2 or args[1].startswith("-"):
        import io

        from django.core.management import execute_from_command_line

        sys.stdin = io.StringIO(raw)
        execute_from_command_line(["slowave", "hook", *args[1:]])
        return
    import django

    django.setup()
    from django.utils import timezone

    from memory.services.hooks import hook_run

    text = hook_run(event=args[1], raw=raw, now=timezone.now())
    if text:
        print(text)


def run_hook(args: list[str]) -> None:
    """`slowave hook EVENT` that never breaks the client: whatever fails (settings, the
    database, the hook itself, the time limit) is one line on stderr, and the exit is 0."""
    import signal
    import threading

    limit = HOOK_TIMEOUTS.get(args[1] if len(args) > 1 else "", 10)

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"gave up after {limit}s")

    def kill() -> None:  # stuck in C code the alarm cannot interrupt
        print(f"slowave hook: gave up after {limit}s", file=sys.stderr, flush=True)
        os._exit(0)

    signal.signal(signal.SIGALRM, expire)
    signal.alarm(limit)
    killer = threading.Timer(limit + 2, kill)
    killer.daemon = True
    killer.start()
    try:
        event = args[1] if len(args) > 1 else ""
        raw = sys.stdin.read()
        from memory.services.hook_reads import hook_run_http

        # A running server answers without this process starting Django.
        text = hook_run_http(event=event, raw=raw)
        if text is not None:
            if text:
                print(text)
            raise SystemExit(0)
        _hook_in_process(args, raw)
    except SystemExit:
        pass  # a usage or CommandError line is already on stderr
    except BaseException as exc:  # noqa: BLE001 - a hook must not break the client
        line = " ".join(str(exc).split()) or type(exc).__name__
        print(f"slowave hook: {line[:300]}", file=sys.stderr)
    finally:
        signal.alarm(0)
        killer.cancel()
    raise SystemExit(0)


def main(argv: list[str] | None = None) -> None:
    db, as_json, args = parse_globals(list(sys.argv[1:] if argv is None else argv))
    if not args:
        _fail("a command is required")
    if args[0] in {"-h", "help"}:
        print(usage())
        raise SystemExit(0)
    if args[0] not in COMMANDS:
        _fail(f"unknown command {args[0]!r}")
    if db:
        os.environ["SLOWAVE_DB_PATH"] = os.path.abspath(os.path.expanduser(db))
    if args[0] == "hook" and not as_json:
        run_hook(args)
    if as_json:
        if args[0] not in JSON_COMMANDS:
            _fail(f"{args[0]} has no --json output")
        args.append("--json")
    if args[0] == "mcp-serve" and not {"-h", "--help"} & set(args[1:]):
        # Before Django: the cycle collector waits until the imports are done
        # (mcp_bridge.collector), and the client's handshake is answered while they run.
        from mcp_bridge import collector

        collector.pause()
        from mcp_bridge.greeter import greet_early

        greet_early()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "slowave_site.settings")
    from django.core.management import execute_from_command_line

    from slowave_site.env import settings_or_exit
    from slowave_site.schema import migrate_or_exit

    settings_or_exit()
    command = COMMANDS[args[0]][0]
    if not {"-h", "--help"} & set(args[1:]):
        migrate_or_exit(command)
    execute_from_command_line(["slowave", command, *args[1:]])


if __name__ == "__main__":  # `python -m slowave_site.cli`: a checkout without the console script
    main()
