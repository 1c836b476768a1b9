"""Every `slowave ...` command the README shows exists, with the options it shows (issue 28).

The README is a newcomer's only guide: a command it names that the CLI does not have (or an
option the command does not take) is a first hour lost. Each `slowave WORD [SUB] [--opt]` in
its code blocks and inline code is checked against the console script's command table and
the command's own argument parser (subcommands included), in process.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from django.core.management import get_commands, load_command_class

from slowave_site.cli import COMMANDS

README = Path(__file__).resolve().parents[1] / "README.md"
_CODE = re.compile(r"```[a-z]*\n(.*?)```|``(.+?)``|`([^`]+)`", re.DOTALL)
_INVOCATION = re.compile(r"(?:^|[\s(;&])slowave((?: +[^\s`#;&)]+)+)")


def _invocations() -> list[list[str]]:
    found: list[list[str]] = []
    for match in _CODE.finditer(README.read_text()):
        block, inline = match.group(1), match.group(2) or match.group(3)
        for line in block.splitlines() if block else [" ".join(inline.split())]:
            for call in _INVOCATION.finditer(line):
                words = call.group(1).replace("[", " ").replace("]", " ").split()
                while words and words[0] in ("--json",) or words and words[0].startswith("--db"):
                    words = words[1:]
                if words and re.fullmatch(r"[a-z][a-z-]*", words[0]):
                    found.append(words)
    return found


def _parser(command: str) -> argparse.ArgumentParser:
    app = get_commands()[command]  # the app whose management command it is, as manage.py finds
    return load_command_class(app, command).create_parser("slowave", command)


def _options(parser: argparse.ArgumentParser, words: list[str]) -> tuple[set[str], list[str]]:
    """The options `words` may use, descending into each subcommand named; and the rest."""
    options = {o for action in parser._actions for o in action.option_strings}
    for index, word in enumerate(words):
        for action in parser._actions:
            if not isinstance(action, argparse._SubParsersAction):
                continue
            # `bench locomo|longmemeval --store DIR`: each alternative must take the options
            named = [action.choices[alt] for alt in word.split("|") if alt in action.choices]
            if named:
                taken = [_options(sub, words[index + 1 :]) for sub in named]
                return set.intersection(*(t[0] for t in taken)), taken[0][1]
    return options, words


def test_the_readme_shows_commands() -> None:
    assert len(_invocations()) > 30


@pytest.mark.parametrize("words", _invocations(), ids=lambda words: " ".join(words)[:60])
def test_every_command_the_readme_shows_exists_with_its_options(words: list[str]) -> None:
    command = words[0]
    assert command in COMMANDS, f"`slowave {command}` is not a command: {sorted(COMMANDS)}"
    options, rest = _options(_parser(COMMANDS[command][0]), words[1:])
    shown = {w.split("=", 1)[0] for w in rest if w.startswith("--") and w != "--"}
    unknown = sorted(o for o in shown if o not in options and not o.startswith("--…"))
    assert not unknown, f"`slowave {' '.join(words)}`: {command} takes no {unknown}"
