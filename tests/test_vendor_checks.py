"""Only the engine modules and the migrations read the database vendor (issue 27).

Code that needs something done differently on SQLite and PostgreSQL asks the engine
(memory.engines) to do it; a `connection.vendor` test anywhere else is a second place that
would have to learn about a new engine. The scan reads every .py file of the checkout with
`ast`, so the word in a comment, docstring or string does not count, and a read of `.vendor`
into a variable, a dict lookup by it or `getattr(db, "vendor")` does. The second test shows
the scan is not vacuous: planted reads fail it, the same reads in an engine module or a
migration do not.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINES = Path("memory", "engines")


def _allowed(relative: Path) -> bool:
    return relative.is_relative_to(ENGINES) or "migrations" in relative.parts


def _reads_vendor(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr == "vendor"
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("getattr", "hasattr"):
        return any(isinstance(a, ast.Constant) and a.value == "vendor" for a in node.args[1:2])
    return False


def _sources(root: Path) -> list[Path]:
    found = []
    for directory, subdirectories, files in os.walk(root):
        # Hidden directories (.git, caches, a virtualenv) and byte code hold none of ours.
        subdirectories[:] = [d for d in subdirectories if not d.startswith((".", "__"))]
        found += [Path(directory, name) for name in files if name.endswith(".py")]
    return sorted(found)


def vendor_reads(root: Path) -> list[str]:
    """`path:line` of each read of a database vendor outside the engines and migrations."""
    found = []
    for path in _sources(root):
        relative = path.relative_to(root)
        if _allowed(relative):
            continue
        source = path.read_text(encoding="utf-8")
        if "vendor" not in source:  # parsing only the files that name it keeps the scan quick
            continue
        tree = ast.parse(source, filename=str(path))
        lines = sorted({node.lineno for node in ast.walk(tree) if _reads_vendor(node)})
        found += [f"{relative}:{line}" for line in lines]
    return found


def test_it_reads_the_database_vendor_only_in_the_engine_modules_and_migrations() -> None:
    assert vendor_reads(ROOT) == [], (
        "ask memory.engines.storage_engine() instead of testing the vendor"
    )


PLANTED = {
    "memory/services/planted.py": (
        "from django.db import connection\n"
        "def a():\n"
        "    if connection.vendor == 'sqlite':\n"  # a comparison: line 3
        "        return 1\n"
        "def b(db):\n"
        "    vendor = db.vendor\n"  # a read for later: line 6
        "    return {'sqlite': 1}[getattr(db, 'vendor')]\n"  # by name: line 7
        "# connection.vendor == 'sqlite' in a comment\n"
        "NOTE = \"connection.vendor == 'sqlite' in a string\"\n"
    ),
    "memory/engines/planted.py": "def a(db):\n    return db.vendor == 'sqlite'\n",
    "memory/migrations/9999_planted.py": "def a(db):\n    return db.vendor == 'sqlite'\n",
}


def test_it_finds_a_vendor_read_planted_outside_the_engines(tmp_path: Path) -> None:
    for relative, source in PLANTED.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(source)
    assert vendor_reads(tmp_path) == [
        "memory/services/planted.py:3",
        "memory/services/planted.py:6",
        "memory/services/planted.py:7",
    ]
