"""Session-wide test setup: the ONNX export, the `slow` marker, the factory fixtures.

Two loops:

    python -m pytest                    # everything (CI; ~20 min)
    python -m pytest -m "not slow"      # the fast loop: unit and service tests in this process

**What is slow.** A test is marked `slow` here, at collection, when it starts or drives
another process (or needs a service that is not this process):

* its module, or the module of any fixture it uses, imports one of SLOW_IMPORTS, directly or
  through a `tests.*` helper module (tests/e2e_support.py's `mcp_serve` over stdio,
  tests/cli/runner.py's `slowave` subprocesses, tests/admin/live.py's `slowave up` and
  Chromium, tests/pg_support.py's PostgreSQL, ...);
* or the test (or a fixture it uses) imports one of them inside its body;
* or its node id starts with an entry of SLOW_TESTS: in-process, yet slow (measured with
  `--durations`; say why beside the entry).

So a new test that uses `server_fixture`, `spawn_server`, `slowave(...)`, `live_server` or
`subprocess` is slow without anyone marking it; one that calls the services in-process (the
factories below) is fast. What this cannot see is a process started by the project's own code
(slowave_site.bench.load starts `slowave up`) or plain slowness: list those in SLOW_TESTS, or mark
the test `@pytest.mark.slow` itself. `python -m pytest --collect-only -q -m slow FILE` shows
how a file's tests came out.

**Factories** (tests/factories.py) write through the real services; the fixtures here wrap
the common ones for tests on the database (`scope`, `session`).

The ONNX export: made once per SLOWAVE_MODEL_DIR (under CI's fresh SLOWAVE_HOME: once per
run), in a child process so this one never imports torch for it. Each test server gets its
own SLOWAVE_HOME; the helpers that start them pass SLOWAVE_MODEL_DIR on, so none pays a
first-start export.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from inspect import ismodule
from pathlib import Path
from typing import Any

import pytest

from tests import factories

REPO_ROOT = Path(__file__).resolve().parent.parent

# What a test (or a helper it imports) reaches for when it runs another process or a service.
SLOW_IMPORTS = (
    "subprocess",
    "multiprocessing",
    "selenium",
    "mcp.client.stdio",  # stdio_client spawns `manage.py mcp_serve`
    "tests.pg_support",  # a PostgreSQL server
)
# Slow all the same, though nothing above shows it: node id prefix -> why. Measured with
# `--durations` (seconds of wall clock on a loaded 2-core machine).
SLOW_TESTS: dict[str, str] = {
    "tests/memory/test_blank_vectors.py::test_it_gives_tokenless_text_a_unit_vector_with_the_"
    "model[torch]": "loads the sentence-transformers (torch) model, 22 s",
    "tests/memory/test_blank_vectors.py::test_a_": "long texts encoded batch by batch, 12-20 s",
    "tests/memory/test_onnx_embedder.py::test_it_gives_the_vectors_of_the_torch_model": "torch",
    "tests/memory/test_onnx_embedder.py::test_int8_weights_stay_close_to_torch": "torch",
    "tests/bench/test_dense_model.py": "the bundled torch model, 63 s",
    # slowave_site.bench.load starts `slowave up` (load_server) or the floor server in a subprocess.
    "tests/bench/test_load.py::test_it_runs_full_cycles": "a real `slowave up`, 44 s",
    "tests/bench/test_load.py::test_it_reports_the_share_of_a_no_work": "two servers, 39 s",
    "tests/bench/test_load.py::test_it_gives_the_floor": "the floor server, 9 s",
    "tests/bench/test_longmemeval_slowave.py": "ingests haystacks with the real model, 5-26 s",
    "tests/bench/test_store.py": "ingests and consolidates conversations, 4-8 s",
    "tests/consolidation/test_bench.py::test_it_reports_the_clustering_rate": "scratch DB, 11 s",
    "tests/consolidation/test_commands_and_tasks.py::test_it_runs_a_commits_follow_up_inline": (
        "every pass run eagerly after a commit, 31 s"
    ),
}


def _source(value: Any) -> str:
    if ismodule(value):
        return value.__name__
    return str(getattr(value, "__module__", "") or "")


def _names_slow(name: str, seen: dict[str, bool]) -> bool:
    """True if `name` (an imported module or an object's module) is or leads to SLOW_IMPORTS."""
    if any(name == s or name.startswith(s + ".") for s in SLOW_IMPORTS):
        return True
    if not name.startswith("tests.") or name == __name__:
        return False
    if name not in sys.modules:
        try:
            importlib.import_module(name)
        except ImportError:  # a dotted name of something inside a module
            return False
    return _reaches_slow(name, seen)


def _reaches_slow(module_name: str, seen: dict[str, bool]) -> bool:
    """True if the module imports a SLOW_IMPORTS name, itself or via a `tests.*` module."""
    if module_name in seen:
        return seen[module_name]
    seen[module_name] = False  # import cycles end here
    module = sys.modules.get(module_name)
    values = vars(module).values() if module is not None else ()
    found = any(_source(v) != module_name and _names_slow(_source(v), seen) for v in list(values))
    seen[module_name] = found
    return found


def _imports_in(function: Any) -> set[str]:
    """Module names a test imports in its body (`import x`, `from x import y` name x)."""
    code = getattr(function, "__code__", None)
    return set(code.co_names) if code is not None else set()


def _is_slow(item: pytest.Item, seen: dict[str, bool]) -> bool:
    if any(item.nodeid.startswith(prefix) for prefix in SLOW_TESTS):
        return True
    module = getattr(item, "module", None)
    if module is not None and _reaches_slow(module.__name__, seen):
        return True
    functions = [getattr(item, "function", None)]
    info = getattr(item, "_fixtureinfo", None)
    for defs in info.name2fixturedefs.values() if info is not None else ():
        for fixturedef in defs:
            owner = getattr(fixturedef.func, "__module__", "") or ""
            if owner == __name__:
                continue  # this file's fixtures run in-process (the export once, when stale)
            if _names_slow(owner, seen):
                return True
            functions.append(fixturedef.func)
    return any(_names_slow(name, seen) for f in functions for name in _imports_in(f))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    seen: dict[str, bool] = {}
    for item in items:
        if item.get_closest_marker("slow") is None and _is_slow(item, seen):
            item.add_marker(pytest.mark.slow)


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


@pytest.fixture
def scope() -> str:
    """A scope of this test alone."""
    return factories.fresh_scope()


@pytest.fixture
def session(db: None, scope: str) -> dict[str, Any]:
    """An open session in `scope` (the activate reply)."""
    return factories.open_session(scope)
