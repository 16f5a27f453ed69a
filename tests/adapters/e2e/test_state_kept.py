"""A CLI's own state outlives its pane (issue 16): the real CLIs in PTY panes, prepared by their adapters,
against the fake model API, in temporary homes.

- A turn in a pane, the pane closed: the conversation is where the CLI keeps it without Polter, so a pane of
  ``polter --restore`` continues it, and so does a plain run of the CLI's own resume (no Polter anywhere): the fake
  model receives the panes' words as history. The same when the home already holds the CLI's state from an
  earlier plain run, which is all still there.
- A login the CLI writes in the pane (Codex's ``codex login``, Gemini CLI's OAuth file, Qwen Code's written by a
  rename over the link, Claude Code's credentials) is the user's after the pane.
- The app killed with SIGKILL: its panes' runtime dirs are gone after the next start, and what the CLI wrote
  there is in the user's home.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from support.fake_models import FakeModelServer, ModelRequest
from support.processes import process_running

from polter.adapters import PaneToPrepare, TestMode
from polter.adapters.plugins import RuntimeDir, write_pane_files

from ..conftest import files_containing
from .agent_pane import OFFLINE, Agent, with_home
from .conftest import RealCli, real_cli, seed_opencode_plugin_sdk

pytestmark = pytest.mark.e2e

READY = {"claude-code": "? for shortcuts", "codex": "Ask Codex to do anything", "gemini-cli": "Type your message",
         "qwen-code": "Type your message", "opencode": "Ask anything"}
CLIS = list(READY)
FOLDERS = {"claude-code": ".claude", "codex": ".codex", "gemini-cli": ".gemini", "qwen-code": ".qwen",
           "opencode": ".local/share/opencode"}
"""Where each CLI keeps its state without Polter."""
NO_GATEWAY = "http://127.0.0.1:9"
"""These tests are about the CLI's own files, not its MCP servers: the gateway's address is a dead port."""


def make_pane(tmp_path: Path, home: Path, project: Path, model: FakeModelServer, runtime: Path | None = None,
              **overrides: object) -> PaneToPrepare:
    return PaneToPrepare(pane_id="p1", gateway_url=NO_GATEWAY, runtime_dir=runtime or tmp_path / "run" / "p1", cwd=project,
                token="state-test-token", home=home, test_mode=TestMode(model_base_url=model.url), **overrides)


async def turn_in_a_pane(cli: RealCli, pane: PaneToPrepare, home: Path, words: str, model: FakeModelServer, *,
                         ready: str | None = None) -> ModelRequest:
    """Start the CLI in a PTY pane, say ``words``, wait for the answer, close the pane (CLI ended, runtime dir
    removed, as the workspace does); the model request that carried ``words``."""
    async with Agent(cli.adapter, pane, home=home, path_dirs=[cli.bin_dir]) as agent:
        await agent.wait_for(ready or READY[cli.name], timeout=120)
        await agent.wait_until_quiet(1.0)
        answers = agent.text().count("Hello from fake model")
        start = len(model.requests)
        await agent.type(words)
        request = await asyncio.to_thread(
            model.wait_for, lambda r: words in r.prompt and bool(r.tools), 90, start=start)  # not a title request
        await agent.wait_until(lambda: agent.text().count("Hello from fake model") > answers, "the answer", 90)
        await agent.wait_until_quiet(1.0)
    assert not pane.runtime_dir.exists(), "the pane's runtime dir is removed with the pane"
    return request


def plain_env(cli: RealCli, home: Path, model: FakeModelServer) -> dict[str, str]:
    """The environment of the CLI run by hand in a terminal: the temporary home, the fake model, no Polter."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(("POLTER_", "CI"))}
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "QWEN_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
                 "XDG_STATE_HOME", "OPENCODE_CONFIG", "OPENCODE_CONFIG_CONTENT", "ANTHROPIC_API_KEY", "OPENAI_API_KEY",
                 "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        env.pop(name, None)
    env |= OFFLINE | {"HOME": str(home), "PATH": f"{cli.bin_dir}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}",
                      "LANG": "C.UTF-8"}
    if cli.name == "claude-code":
        env |= {"ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_AUTH_TOKEN": "plain-key", "DISABLE_TELEMETRY": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}
    elif cli.name == "codex":
        env["PLAIN_MODEL_KEY"] = "plain-key"
    elif cli.name == "gemini-cli":
        env |= {"GEMINI_API_KEY": "plain-key", "GOOGLE_GEMINI_BASE_URL": model.url}
    elif cli.name == "qwen-code":
        env |= {"OPENAI_API_KEY": "plain-key", "OPENAI_BASE_URL": f"{model.url}/v1", "OPENAI_MODEL": "qwen-fake"}
    elif cli.name == "opencode":
        provider = {"npm": "@ai-sdk/anthropic", "name": "fake",
                    "options": {"baseURL": f"{model.url}/v1", "apiKey": "plain-key"},
                    "models": {"fake-model": {"name": "fake", "tool_call": True}}}
        # The session keeps its model: the plain run knows the pane's provider (test mode's id), as a user's would.
        env |= {"OPENCODE_CONFIG_CONTENT": json.dumps({"provider": {"polter-test": provider},
                                                        "model": "polter-test/fake-model",
                                                        "share": "disabled", "autoupdate": False}),
                "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
                "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1"}
    return env


def plain_args(name: str, words: str, *, resume: bool) -> list[str]:
    """The CLI's own non-interactive turn, continuing its latest conversation in the folder when ``resume``."""
    if name == "claude-code":
        return [*(["--continue"] if resume else []), "-p", words]
    if name == "codex":  # `resume --last` picks among the sessions of the same provider: the test mode's id
        provider = '{name="fake", base_url="{model}/v1", env_key="PLAIN_MODEL_KEY", wire_api="responses"}'
        config = ["-c", 'model_provider="polter-test"', "-c", 'model="gpt-fake"', "-c",
                  f"model_providers.polter-test={provider}"]
        return ["exec", *(["resume", "--last"] if resume else []), "--skip-git-repo-check", *config, words]
    if name == "gemini-cli":
        return [*(["--resume", "latest"] if resume else []), "--skip-trust", "-m", "gemini-2.5-flash", "-p", words]
    if name == "qwen-code":
        return [*(["--continue"] if resume else []), "--auth-type", "openai", "-m", "qwen-fake", "-p", words]
    return ["run", *(["--continue"] if resume else []), words]


def plain_run(cli: RealCli, home: Path, project: Path, model: FakeModelServer, words: str, *,
              resume: bool) -> ModelRequest:
    """Run the CLI by hand (no Polter) for one turn; the model request that carried ``words``."""
    start = len(model.requests)
    args = [arg.replace("{model}", model.url) for arg in plain_args(cli.name, words, resume=resume)]
    env = plain_env(cli, home, model) | {"PWD": str(project)}  # as a shell in the folder sets it (opencode reads it)
    result = subprocess.run([str(cli.binary), *args], env=env, cwd=project,
                            capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, f"{args}: {result.stdout[-2000:]}{result.stderr[-2000:]}"
    return model.wait_for(lambda request: words in request.prompt and bool(request.tools), start=start)  # not a title


SQLITE_JOURNALS = (".sqlite-wal", ".db-wal", ".sqlite-shm", ".db-shm", ".sqlite-journal", ".db-journal")


def state_files(home: Path, name: str) -> dict[Path, bytes]:
    folder = home / FOLDERS[name]
    return {path: path.read_bytes() for path in folder.rglob("*") if path.is_file() and not path.is_symlink()}


def prepare_home(name: str, home: Path, project: Path) -> None:
    """What the user set up for the plain CLI (Gemini CLI's chosen sign-in; opencode's plugin SDK, offline)."""
    if name == "opencode":
        seed_opencode_plugin_sdk(home, project)
    if name == "gemini-cli":
        (home / ".gemini").mkdir(exist_ok=True)
        (home / ".gemini" / "settings.json").write_text('{"security": {"auth": {"selectedType": "gemini-api-key"}}}')


def assert_kept(home: Path, project: Path, name: str, before: dict[Path, bytes]) -> None:
    """The CLI's earlier state is all still there, none of it replaced; the pane wrote the user's files in place
    and its token reached none of them."""
    after = state_files(home, name)
    for path, content in before.items():
        if path.suffix in SQLITE_JOURNALS:
            continue  # SQLite's own transient files: it removes them when the last connection closes
        assert path in after, f"{path} is gone"
        assert after[path].startswith(content) or path.suffix in (".sqlite", ".db", ".json", ".sqlite-wal", ".db-wal",
                                                                  ".sqlite-shm", ".db-shm"), path
    assert not list(home.rglob("*.polter-p1-*")), "no conflict: the pane wrote the user's files in place"
    assert not files_containing("state-test-token", home, project), "the pane's token reached no file of the home"


@pytest.mark.parametrize("name", CLIS)
async def test_a_conversation_in_a_pane_goes_on_in_a_restored_pane_and_in_the_plain_cli(
        name: str, tmp_path: Path, home: Path, project: Path) -> None:
    """In a fresh home: a pane's conversation, the pane closed, goes on in a pane of ``polter --restore``
    (PaneToPrepare.resume), which shows it first; then the plain CLI's own resume continues it, with both panes'
    words. (One test for both: the second pane's turn is the restore, and the plain resume reads what the panes
    wrote; the first pane's words in its history show that the fresh home kept the first pane's state.)"""
    cli = real_cli(name)
    assert cli.adapter.info.resume
    prepare_home(name, home, project)
    with FakeModelServer([]) as model:
        await turn_in_a_pane(cli, make_pane(tmp_path, home, project, model), home, "words of the first pane", model)
        restored = make_pane(tmp_path, home, project, model, runtime=tmp_path / "run" / "p2", resume=True)
        request = await turn_in_a_pane(cli, restored, home, "words of the restored pane", model,
                                       ready="words of the first pane")
        assert "words of the first pane" in json.dumps(request.body), "the restored pane started a new conversation"
        resumed = plain_run(cli, home, project, model, "and once more by hand", resume=True)
        history = json.dumps(resumed.body)
        for words in ("words of the first pane", "words of the restored pane"):
            assert words in history, f"the plain {cli.name} did not continue the panes' conversation ({words!r})"
    assert_kept(home, project, name, {})


@pytest.mark.parametrize("name", CLIS)
async def test_a_conversation_in_a_pane_is_resumed_by_the_plain_cli_beside_its_earlier_state(
        name: str, tmp_path: Path, home: Path, project: Path) -> None:
    """The user has used the CLI before, without Polter: a pane's conversation is resumed by the plain CLI, and
    the earlier state is all still there."""
    cli = real_cli(name)
    prepare_home(name, home, project)
    with FakeModelServer([]) as model:
        plain_run(cli, home, project, model, "words from an earlier plain run", resume=False)
        before = state_files(home, name)
        assert before, f"the plain run kept nothing in ~/{FOLDERS[name]}"
        await turn_in_a_pane(cli, make_pane(tmp_path, home, project, model), home, "hello from the pane", model)
        resumed = plain_run(cli, home, project, model, "and once more by hand", resume=True)
        history = json.dumps(resumed.body)
        assert "hello from the pane" in history, f"the plain {cli.name} did not continue the pane's conversation"
    assert_kept(home, project, name, before)


LOGIN_FILES = {"codex": ".codex/auth.json", "gemini-cli": ".gemini/oauth_creds.json",
               "qwen-code": ".qwen/oauth_creds.json", "claude-code": ".claude/.credentials.json"}


def write_login(name: str, pane: PaneToPrepare, env: dict[str, str], cli: RealCli, secret: str) -> None:
    """The CLI writes its login in the pane, the way it does: Codex by its own ``login`` command, Gemini CLI with
    fs.writeFile (through the link), Qwen Code with a temporary file renamed over it (replacing the link), Claude
    Code with a plain write of its credentials file."""
    if name == "codex":
        result = subprocess.run([str(cli.binary), "login", "--with-api-key"], input=secret, env=env, text=True,
                                capture_output=True, timeout=60, cwd=pane.cwd)
        assert result.returncode == 0, result.stderr
        return
    folder = {"gemini-cli": "gemini-cli/.gemini", "qwen-code": "qwen-code", "claude-code": "claude/config"}[name]
    target = pane.runtime_dir / folder / Path(LOGIN_FILES[name]).name
    text = json.dumps({"access_token": secret, "refresh_token": "r", "expiry_date": 4102444800000})
    if name == "qwen-code":
        temporary = target.with_name(f"{target.name}.tmp.4242.x")
        temporary.write_text(text)
        temporary.chmod(0o600)
        os.replace(temporary, target)
    else:
        with open(target, "w") as stream:
            stream.write(text)


@pytest.mark.parametrize("prior", [False, True], ids=["first-login", "login-refreshed"])
@pytest.mark.parametrize("name", list(LOGIN_FILES))
def test_a_login_written_in_a_pane_is_the_users_after_it(name: str, prior: bool, tmp_path: Path, home: Path,
                                                         project: Path) -> None:
    cli = real_cli(name)
    login = home / LOGIN_FILES[name]
    if prior:
        login.parent.mkdir(parents=True, exist_ok=True)
        login.write_text('{"access_token": "the old login"}')
    with FakeModelServer([]) as model:
        pane = make_pane(tmp_path, home, project, model)
        prepared = cli.adapter.prepare(pane)
        runtime = RuntimeDir(pane.runtime_dir)
        runtime.create()
        write_pane_files(pane.runtime_dir, prepared.files, prepared.homes)
        env = with_home(prepared.launch, home, [cli.bin_dir]).environment()
        write_login(name, pane, env, cli, "sk-the-new-login")
        runtime.remove()
    assert not pane.runtime_dir.exists()
    assert "sk-the-new-login" in login.read_text()
    assert not list(login.parent.glob(f"{login.name}.polter-*")), "the user's login had not changed: replaced"
    if name == "codex":  # and the plain CLI is logged in with it
        status = subprocess.run([str(cli.binary), "login", "status"], env=plain_env(cli, home, model), text=True,
                                capture_output=True, timeout=60)
        assert "API key configured - sk-the-n" in status.stdout + status.stderr, status


def session_running(session: int) -> bool:
    """Whether a process of the session ``session`` leads (the pane's CLI and its children) still runs."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session and fields[0] != "Z":
            return True
    return process_running(session)


KILLED_APP = textwrap.dedent("""\
    import asyncio, json, os, sys
    tests, name, binary, runs, home, project, model_url, ready = sys.argv[1:9]
    sys.path[:0] = [tests, tests + "/support"]
    from adapters.e2e.agent_pane import Agent
    from polter.adapters import PaneToPrepare, TestMode
    from polter.adapters.plugins import discover

    async def main():
        run = os.path.join(runs, str(os.getpid()))  # the app's run dir, named after its pid
        adapter = type(discover(entry_points=False).get(name))(executable=binary)
        pane = PaneToPrepare(pane_id="p1", gateway_url="http://127.0.0.1:9", runtime_dir=os.path.join(run, "p1"),
                             cwd=project, token="killed-app-token", home=home, test_mode=TestMode(model_base_url=model_url))
        agent = Agent(adapter, pane, home=home, path_dirs=[os.path.dirname(binary)])
        await agent.__aenter__()
        await agent.wait_for(ready, timeout=120)
        await agent.wait_until_quiet(1.0)
        await agent.type("words before the crash")
        await agent.wait_for("Hello from fake model", timeout=90)
        await agent.wait_until_quiet(1.0)
        print(json.dumps({"cli": agent._process.pid, "run": run}), flush=True)
        await asyncio.Event().wait()  # until killed

    asyncio.run(main())
""")


@pytest.mark.parametrize("name", ["qwen-code", "codex"])
def test_a_killed_apps_panes_are_sorted_out_at_the_next_start(name: str, tmp_path: Path, home: Path, project: Path,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    """The app dies with SIGKILL while a pane runs; the CLI ends with its PTY. The next start removes the run dir,
    after moving what the CLI left in it (for Qwen Code, a login it wrote in the pane) into the user's home."""
    from polter.host.workspace import Workspace

    cli = real_cli(name)
    state = tmp_path / "state"
    script = tmp_path / "killed_app.py"
    script.write_text(KILLED_APP)
    tests = Path(__file__).resolve().parents[2]
    with FakeModelServer([]) as model:
        app = subprocess.Popen(
            [sys.executable, str(script), str(tests), name, str(cli.binary), str(state / "run"), str(home),
             str(project), model.url, READY[name]],
            stdout=subprocess.PIPE, text=True, env={**os.environ, "HOME": str(home)})
        assert app.stdout is not None
        line = app.stdout.readline()
        assert line, f"the app ended before its pane answered (exit {app.wait()})"
        started = json.loads(line)
        run = Path(started["run"])
        folder = run / "p1" / ("qwen-code" if name == "qwen-code" else "codex")
        if name == "qwen-code":  # a login saved as Qwen Code saves it: the link replaced by the pane's own file
            temporary = folder / "oauth_creds.json.tmp.4242.x"
            temporary.write_text('{"access_token": "written in the pane"}')
            os.replace(temporary, folder / "oauth_creds.json")
        (folder / "left-by-the-cli.json").write_text('{"kept": true}')
        app.send_signal(signal.SIGKILL)
        app.wait(timeout=30)
        deadline = time.monotonic() + 60
        while session_running(started["cli"]):  # its PTY closed with the app: the CLI (and what it started) ends
            assert time.monotonic() < deadline, "the CLI outlived the killed app by a minute"
            time.sleep(0.1)
        assert run.exists(), "killed: nothing was cleaned up yet"

        Workspace(state_dir=state)._prepare_run_dir()  # what the next start does

        assert not run.exists(), f"left: {sorted(map(str, run.rglob('*')))}; {caplog.text}"
        user = home / FOLDERS[name]
        if name == "qwen-code":
            assert json.loads((user / "oauth_creds.json").read_text()) == {"access_token": "written in the pane"}
        assert json.loads((user / "left-by-the-cli.json").read_text()) == {"kept": True}
        resumed = plain_run(cli, home, project, model, "after the crash", resume=True)
        assert "words before the crash" in json.dumps(resumed.body)
