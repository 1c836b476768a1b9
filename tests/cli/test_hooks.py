"""Claude Code hooks, run as Claude Code runs the commands `slowave setup --hooks` writes: a
shell command, the hook's JSON on stdin, the project as cwd; against a live `slowave up` and
with none running."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.admin.live import free_port, live_server
from tests.cli.runner import cli_env, run_python, slowave
from tests.codex_rollouts import NOISE, exchange, opening, write_rollout

SCOPE = "project:github.com/acme/widgets"
FACT = "The widgets release is signed with the hardware key kept in the blue safe."
# Names neither the repository nor anything a session's opening cue says: only the
# session-start fill (the scope's most salient memories) brings it.
QUIET = "Database migrations must be reviewed by a second person before they are merged."
TALK = "Remember that the gizmo cache is flushed by running make purge-gizmos nightly."


@dataclass
class Setup:
    home: Path
    user_home: Path
    repo: Path
    commands: dict[str, str]
    port: int
    mode: str

    def env(self) -> dict[str, str]:
        return cli_env(self.home, HOME=str(self.user_home), SLOWAVE_PORT=str(self.port))

    def run(self, event: str, **payload: object) -> subprocess.CompletedProcess[str]:
        body = {
            "session_id": f"cc-{self.mode}",
            "transcript_path": str(self.repo / "none.jsonl"),
            "cwd": str(self.repo),
            "hook_event_name": event,
            **payload,
        }
        proc = subprocess.run(
            ["sh", "-c", self.commands[event]],
            cwd=self.repo,
            env=self.env(),
            input=json.dumps(body),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0
        return proc


def _commands(settings_file: Path) -> dict[str, str]:
    hooks = json.loads(settings_file.read_text())["hooks"]
    found: dict[str, str] = {}
    for event, entries in hooks.items():
        for entry in entries:
            for hook in entry["hooks"]:
                if " hook " in hook["command"]:
                    found[event] = hook["command"]
    return found


@pytest.fixture(scope="module", params=["in-process", "http"])
def setup(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Setup]:
    root = tmp_path_factory.mktemp(f"hooks-{request.param}")
    home, user_home, repo = root / "slowave", root / "user", root / "widgets"
    for path in (home, user_home, repo):
        path.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(
        ["git", "remote", "add", "origin", "git@github.com:Acme/Widgets.git"], cwd=repo, check=True
    )
    assert slowave(home, "migrate", "-v", "0").code == 0
    env = cli_env(home, HOME=str(user_home))
    written = slowave(home, "setup", "claude-code", "--hooks", "--dir", str(repo), env=env)
    assert written.code == 0, written.err
    assert SCOPE in written.out
    commands = _commands(user_home / ".claude" / "settings.json")
    assert set(commands) == {"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd", "PreCompact"}
    run_python(
        home,
        "from tests.factories import open_session, remember, commit\n"
        f"s = open_session({SCOPE!r}, 'Record release notes', goal='notes')\n"
        f"remember({SCOPE!r}, s['session_id'], {FACT!r})\n"
        f"remember({SCOPE!r}, s['session_id'], {QUIET!r}, type_='constraint')\n",
    )
    if request.param == "in-process":
        yield Setup(home, user_home, repo, commands, free_port(), request.param)
        return
    with live_server(home, SLOWAVE_EMBEDDER="hash") as base:
        yield Setup(home, user_home, repo, commands, int(base.rsplit(":", 1)[1]), request.param)


def _client_versions(setup: Setup) -> set[str]:
    out = run_python(
        setup.home,
        "from memory.models import Session\n"
        "print(sorted(set(Session.objects.filter(client_name='claude-code-hook')"
        ".values_list('client_version', flat=True))))",
    )
    return set(json.loads(out.strip().splitlines()[-1].replace("'", '"')))


def test_session_start_and_prompt_inject_the_repository_s_fact(setup: Setup) -> None:
    start = setup.run("SessionStart", source="startup")
    assert FACT in start.stdout and SCOPE in start.stdout, start.stderr
    assert QUIET in start.stdout, start.stdout
    prompt = setup.run("UserPromptSubmit", prompt="How is the widgets release signed?")
    assert FACT in prompt.stdout, prompt.stderr
    assert start.stderr == prompt.stderr == ""
    # The live server answered when one ran; the hook's own process otherwise.
    assert _client_versions(setup) == {setup.mode}


def test_a_hook_imports_only_what_its_path_needs(setup: Setup) -> None:
    # Most of a hook's time was Django's and Celery's imports: with a server they are not needed.
    # Without one the hook starts Django by design, but never torch (serving is the ONNX graph).
    env = {**setup.env(), "PYTHONPROFILEIMPORTTIME": "1"}
    body = {"session_id": "cc-light", "cwd": str(setup.repo), "prompt": "How is it signed?"}
    proc = subprocess.run(
        ["sh", "-c", setup.commands["UserPromptSubmit"]],
        cwd=setup.repo,
        env=env,
        input=json.dumps(body),
        capture_output=True,
        text=True,
        timeout=60,
    )
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines()}
    assert "memory.services.hook_reads" in imported, proc.stderr[-2000:]
    roots = {name.split(".")[0] for name in imported}
    assert FACT in proc.stdout, proc.stderr[-2000:]
    assert "torch" not in roots and "sentence_transformers" not in roots
    if setup.mode == "http":
        assert roots & {"django", "celery", "numpy"} == set()
    else:
        assert "django" in roots  # the check above would pass on a hook that never ran


def test_an_unrelated_prompt_injects_nothing(setup: Setup) -> None:
    unrelated = setup.run(
        "UserPromptSubmit", prompt="What is the capital of Mongolia? Tell me about yaks grazing."
    )
    assert unrelated.stdout == "" and unrelated.stderr == ""


def _transcript(path: Path, session: str, cwd: Path, turns: list[tuple[str, str]]) -> None:
    lines = [
        {
            "type": role,
            "sessionId": session,
            "uuid": f"{session}-{index}",
            "cwd": str(cwd),
            "timestamp": f"2026-01-02T03:04:{index:02d}Z",
            "message": {"role": role, "content": text},
        }
        for index, (role, text) in enumerate(turns)
    ]
    noise = {
        "type": "assistant",
        "sessionId": session,
        "uuid": f"{session}-tool",
        "cwd": str(cwd),
        "message": {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": {}}],
        },
    }
    path.write_text("\n".join(json.dumps(line) for line in [*lines, noise]) + "\n")


def _stored(setup: Setup, session: str) -> list[tuple[str, int]]:
    out = run_python(
        setup.home,
        "import json\nfrom memory.models import Session\n"
        f"rows = Session.objects.filter(import_key__startswith='claude-code:{session}', "
        f"scope={SCOPE!r}).order_by('import_key')\n"
        "print(json.dumps([[s.import_key, s.events.count()] for s in rows]))",
    )
    return [tuple(row) for row in json.loads(out.strip().splitlines()[-1])]


def test_stop_captures_the_transcript_once_and_then_only_what_is_new(setup: Setup) -> None:
    session = f"transcript-{setup.mode}"
    transcript = setup.repo / f"{session}.jsonl"
    turns = [("user", TALK), ("assistant", "Noted: make purge-gizmos flushes the gizmo cache.")]
    _transcript(transcript, session, setup.repo, turns)
    for event in ("Stop", "SessionEnd"):  # handed over twice: stored once
        done = setup.run(event, transcript_path=str(transcript))
        assert done.stdout == "" and done.stderr == ""
    assert _stored(setup, session) == [(f"claude-code:{session}", 2)]
    grown = [*turns, ("user", "And the cache lives in /var/gizmo.")]
    _transcript(transcript, session, setup.repo, grown)
    setup.run("PreCompact", transcript_path=str(transcript))
    assert _stored(setup, session) == [
        (f"claude-code:{session}", 2),
        (f"claude-code:{session}#2", 1),
    ]
    # The next prompt's hook shows the captured turn (an episode, not a memory).
    later = setup.run("UserPromptSubmit", prompt="How is the gizmo cache flushed?")
    assert "purge-gizmos" in later.stdout and later.stderr == "", later.stderr
    assert "[episode]" in later.stdout
    # A later recall in the repository's scope finds the captured turn.
    out = run_python(
        setup.home,
        "import json\nfrom tests.factories import open_session, recall\n"
        f"s = open_session({SCOPE!r}, 'gizmo cache flush', goal='flush')\n"
        f"r = recall({SCOPE!r}, s['session_id'], 'How is the gizmo cache flushed?', "
        "evidence='full')\n"
        "print(json.dumps(r))",
    )
    assert "purge-gizmos" in out.strip().splitlines()[-1]


def test_a_failing_hook_says_one_line_and_exits_0(setup: Setup) -> None:
    proc = subprocess.run(
        ["sh", "-c", setup.commands["UserPromptSubmit"]],
        cwd=setup.repo,
        env=setup.env(),
        input="not json",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and "not valid JSON" in proc.stderr
    missing = setup.run("Stop", transcript_path=str(setup.repo / "gone.jsonl"))
    assert missing.stdout == "" and len(missing.stderr.strip().splitlines()) == 1


def test_setup_hooks_merges_keeping_other_hooks_and_is_idempotent(tmp_path: Path) -> None:
    user_home, project = tmp_path / "user", tmp_path / "proj"
    (user_home / ".claude").mkdir(parents=True)
    project.mkdir()
    other = {"type": "command", "command": "echo other"}
    existing = {"model": "x", "hooks": {"Stop": [{"hooks": [other]}]}}
    (user_home / ".claude" / "settings.json").write_text(json.dumps(existing))
    env = cli_env(tmp_path, HOME=str(user_home))
    first = slowave(tmp_path, "--json", "setup", "claude-code", "--hooks", env=env)
    again = slowave(tmp_path, "--json", "setup", "claude-code", "--hooks", env=env)
    assert first.code == again.code == 0, first.err
    assert set(first.json()["data"]["added"]) >= {"SessionStart", "Stop"}
    assert again.json()["data"]["added"] == {}
    merged = json.loads((user_home / ".claude" / "settings.json").read_text())
    assert merged["model"] == "x" and merged["hooks"]["Stop"][0] == {"hooks": [other]}
    assert len(merged["hooks"]["Stop"]) == 2 and len(merged["hooks"]["SessionStart"]) == 1
    local = slowave(
        tmp_path, "setup", "claude-code", "--hooks", "--project", "--dir", str(project), env=env
    )
    assert local.code == 0 and "UserPromptSubmit" in local.out
    written = json.loads((project / ".claude" / "settings.json").read_text())
    assert "UserPromptSubmit" in written["hooks"]


def test_codex_hooks_inject_the_fact_as_codex_runs_them(setup: Setup) -> None:
    # Codex (codex-rs/hooks): .codex/hooks.json, the command run by a shell in the session's
    # cwd, its own input fields (turn_id, model, permission_mode; transcript_path may be null),
    # and plain stdout on exit 0 becoming the model's context.
    env = cli_env(setup.home, HOME=str(setup.user_home))
    written = slowave(
        setup.home, "setup", "codex", "--hooks", "--project", "--dir", str(setup.repo), env=env
    )
    assert written.code == 0, written.err
    hooks = json.loads((setup.repo / ".codex" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "Stop"}
    commands = {event: entries[0]["hooks"][0]["command"] for event, entries in hooks.items()}
    base = {
        "session_id": f"019d036d-codex-{setup.mode}",
        "transcript_path": None,
        "cwd": str(setup.repo),
        "model": "gpt-5.4",
        "permission_mode": "default",
    }
    inputs = {
        "SessionStart": {**base, "hook_event_name": "SessionStart", "source": "startup"},
        "UserPromptSubmit": {
            **base,
            "hook_event_name": "UserPromptSubmit",
            "turn_id": "019d036e-3164",
            "prompt": "How is the widgets release signed?",
        },
    }
    for event, body in inputs.items():
        proc = subprocess.run(
            ["bash", "-lc", commands[event]],
            cwd=setup.repo,
            env=setup.env(),
            input=json.dumps(body),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
        assert FACT in proc.stdout and not proc.stdout.lstrip().startswith(("{", "["))
    unrelated = {**inputs["UserPromptSubmit"], "prompt": "What do yaks eat in Mongolia?"}
    proc = subprocess.run(
        ["bash", "-lc", commands["UserPromptSubmit"]],
        cwd=setup.repo,
        env=setup.env(),
        input=json.dumps(unrelated),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""


SPROCKET_Q = "How do we rebuild the sprocket registry?"
SPROCKET_A = "Run make sprocket-index; it rebuilds the sprocket registry from the Monday dump."


def test_codex_stop_captures_the_rollout_once_and_a_later_activate_finds_it(
    tmp_path: Path,
) -> None:
    # Codex's Stop (codex-rs/hooks stop.command.input): its own rollout file as transcript_path,
    # null for a session Codex does not record. The capture always runs in the hook's process;
    # the real model embeds it and answers the activation.
    home, user_home, repo = tmp_path / "slowave", tmp_path / "user", tmp_path / "widgets"
    for path in (home, user_home, repo):
        path.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(
        ["git", "remote", "add", "origin", "https://github.com/acme/widgets"], cwd=repo, check=True
    )
    env = cli_env(home, HOME=str(user_home), SLOWAVE_EMBEDDER="onnx", SLOWAVE_PORT="1")
    assert slowave(home, "migrate", "-v", "0", env=env).code == 0
    written = slowave(home, "setup", "codex", "--hooks", env=env)
    assert written.code == 0, written.err
    stop = json.loads((user_home / ".codex" / "hooks.json").read_text())["hooks"]["Stop"]
    command = stop[0]["hooks"][0]["command"]
    session = "019e77aa-5c1d-7e2f-8a9b-codexstop"
    rollout = write_rollout(
        user_home / ".codex" / "sessions" / "2026" / "05" / "04" / f"rollout-{session}.jsonl",
        opening(session, str(repo)) + exchange(SPROCKET_Q, SPROCKET_A, second=10),
    )
    body: dict[str, object] = {
        "session_id": session,
        "transcript_path": str(rollout),
        "cwd": str(repo),
        "hook_event_name": "Stop",
        "model": "gpt-5.4",
        "permission_mode": "default",
        "turn_id": "019e77ab-turn",
        "stop_hook_active": False,
        "last_assistant_message": SPROCKET_A,
    }

    def run(payload: dict[str, object]) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            ["bash", "-lc", command],
            cwd=repo,
            env=env,
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == "", proc.stderr
        return proc

    run(body)
    run(body)  # handed over twice: stored once
    run({**body, "transcript_path": None})  # nothing to capture: quiet
    out = run_python(
        home,
        "import json\nfrom memory.models import Event\n"
        f"rows = Event.objects.filter(session__scope={SCOPE!r}).order_by('seq')\n"
        "print(json.dumps([[e.session.import_key, e.role, e.content] for e in rows]))",
        env=env,
    )
    assert json.loads(out.strip().splitlines()[-1]) == [
        [f"codex:{session}", "user", SPROCKET_Q],
        [f"codex:{session}", "assistant", SPROCKET_A],
    ]
    # A later activation in the repository's scope shows the captured turn (an episode).
    out = run_python(
        home,
        "import json\nfrom tests.factories import open_session\n"
        f"r = open_session({SCOPE!r}, 'Where does the sprocket registry come from?', "
        "goal='rebuild it')\nprint(json.dumps(r['memories']))",
        env=env,
        timeout=300,
    )
    shown = json.loads(out.strip().splitlines()[-1])
    assert any(m.get("episode_id") and "make sprocket-index" in m["content"] for m in shown), shown
    assert NOISE not in out
