"""The real AI CLIs inside Polter's pane sandbox (issue 21's end-to-end row), behind the real gateway and the real
egress proxy, driven by the fake model APIs to run a probe through their own shell tool.

For each CLI, under a ``researcher`` that may run ``python3`` (a shell rule is a seatbelt: the hook lets the probe
run, and only the kernel holds it): the pane is prepared ``confined`` (the CLI's own OS sandbox off), registered
with ``polter gateway`` (whose panes socket is the pane's only way to it), given its socket of ``polter egress``
(the role's web rules decide; the fake model's port declared as the CLI's model API on loopback), and its launch
is wrapped by :func:`polter.sandbox.confine.confine`, as a session does. The probe (``python3 probe.py``, in the
project) tries what an agent would: write the project and ``.git/hooks/pre-commit``, read another pane's token
from ``/proc``, read the gateway's state file (the admin credential), switch its role with ``polter panes
set-role``, open a raw socket to a loopback port that is not the gateway, and ``curl`` (a compiled program) an
allowed and a denied host through the proxy (a loopback server stands for both, by the proxy's test hook). It
cannot write, so its lines are read from the tool result the CLI sends back to the model. Only the allowed host
answers; every other attempt fails, nothing changes on disk (the project, and the home but for the CLI's own state
folders), the panes keep their roles, and the gateway's audit shows no host but the two tried through the proxy.
Under ``coder`` the project write succeeds and ``.git/hooks`` still fails.

The harness runs each CLI non-interactively (``-p``, ``exec``, ``run``) as :func:`.agent_pane.run_once` does, but
in the sandbox: the home is the test's (read-only there, but for the CLI's state), and ``TMPDIR`` is left to the
sandbox's private ``/tmp`` (Codex's own sandbox, which needed a folder of its own, is off in a confined pane).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import pytest_asyncio
from support.fake_models import FakeModelServer, Rule

from polter.adapters import PaneToPrepare, PreparedPane, TestMode
from polter.adapters.plugins import RuntimeDir, write_pane_files
from polter.gateway.builtin_calls import builtins_policy
from polter.paths import config_dir, runtime_dir, state_dir
from polter.roles import RoleLibrary
from polter.sandbox.confine import PaneFacts, confine, model_api
from polter.sandbox.egress_supervisor import EgressSupervisor
from polter.host.confined import cli_files, every_clis_config

from .agent_pane import with_home
from .conftest import RealCli, real_cli, seed_opencode_plugin_sdk
from .gateway_process import PolterGateway
from .test_builtins_e2e import ROLES as BUNDLED

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="platform: the pane sandbox needs Linux"),
]

ROLES = {
    **BUNDLED,
    "prober": """
        description = "The bundled researcher, allowed to run python3, and denied one web host"
        extends = "researcher"
        [builtins]
        allow = ["shell(python3:*)"]
        deny = ["web(domain:denied.test)"]
    """,
    "coder-prober": """
        description = "The bundled coder, denied one web host"
        extends = "coder"
        [builtins]
        deny = ["web(domain:denied.test)"]
    """,
}
RUN_LIMIT_S = 180
"""A run through the probe takes 5-20 s: a CLI that has not ended by then waits for what will not come."""
TEST_HOSTS = {"allowed.test": "127.0.0.1", "denied.test": "127.0.0.1"}
"""The proxy's test hook: both names lead to the loopback web server."""

ARGS = {
    "claude-code": ([], ["-p"]),
    "codex": (["exec"], ["--skip-git-repo-check"]),
    "gemini-cli": ([], ["--approval-mode", "yolo", "-p"]),
    "qwen-code": ([], ["-p"]),  # and in yolo mode (below)
    "opencode": ([], ["run"]),
}
"""Non-interactive runs. Gemini CLI and Qwen Code offer their shell tool in -p only outside the default approval
mode (Polter's hook is what decides): Qwen Code's adapter starts it in ``--approval-mode default``, which the test
turns into ``yolo`` (the option given twice makes Qwen Code 0.24.4 crash)."""

PROBE = """\
import json, os, socket, subprocess, sys
args = json.load(open(f"probe-{sys.argv[1]}.json"))
def attempt(name, action):
    try:
        result = action()
        print("PROBE", name, result or "DONE", flush=True)
    except Exception as error:
        print("PROBE", name, "FAILED", type(error).__name__, flush=True)
def write(path):
    with open(path, "w") as handle:
        handle.write("written from inside the pane")
def steal():
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if args["other_token"].encode() in open(f"/proc/{pid}/environ", "rb").read():
                    return "STOLEN"
            except OSError:
                pass
    raise LookupError("no other pane's token in view")
def set_role(env):
    argv = [args["polter"], "panes", "set-role", args["pane"], "coder", "--state-dir", args["gateway_state"]]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    if done.returncode == 0:
        return "SWITCHED"
    raise PermissionError(done.stderr[-300:])
def connect():
    socket.create_connection(("127.0.0.1", args["raw_port"]), timeout=5).close()
def curl(host, *options):
    url = f"http://{host}:{args['web_port']}/from-the-pane"
    done = subprocess.run(["curl", "-sS", "-m", "30", *options, "-o", "-", "-w", "\\n%{http_code}", url],
                          capture_output=True, text=True, timeout=60)
    body, _, code = done.stdout.rpartition("\\n")
    if code == "200" and body.startswith(f"hello {host}"):
        return "ANSWERED"
    raise ConnectionRefusedError(f"curl {done.returncode} HTTP {code}")
unmarked = {name: value for name, value in os.environ.items() if name != "POLTER_SANDBOX"}
attempt("write-project", lambda: write(os.path.join(args["project"], "notes.txt")))
attempt("write-hook", lambda: write(os.path.join(args["project"], ".git", "hooks", "pre-commit")))
attempt("write-cli-config", lambda: write(args["cli_config"]))
attempt("write-other-cli", lambda: write(args["other_cli"]))
attempt("read-other-token", steal)
attempt("read-gateway-file", lambda: open(args["gateway_file"]).read() and "READ")
attempt("set-role", lambda: set_role(dict(os.environ)))
attempt("set-role-unmarked", lambda: set_role(unmarked))
attempt("raw-socket", connect)
attempt("curl-allowed", lambda: curl("allowed.test"))
attempt("curl-allowed-tunnel", lambda: curl("allowed.test", "--proxytunnel"))
attempt("curl-denied", lambda: curl("denied.test"))
attempt("curl-denied-tunnel", lambda: curl("denied.test", "--proxytunnel"))
print("PROBE-END", flush=True)
"""
DENIED = {
    "write-project": "FAILED",
    "write-hook": "FAILED",
    "write-cli-config": "FAILED",
    "write-other-cli": "FAILED",
    "read-other-token": "FAILED",
    "read-gateway-file": "FAILED",
    "set-role": "FAILED",
    "set-role-unmarked": "FAILED",
    "raw-socket": "FAILED",
    "curl-allowed": "ANSWERED",
    "curl-allowed-tunnel": "ANSWERED",
    "curl-denied": "FAILED",
    "curl-denied-tunnel": "FAILED",
}
"""What the probe must report under the researcher; under the coder only the project write differs."""


@dataclass
class Web:
    """A loopback HTTP server standing for both web hosts: it answers ``hello HOST`` and records each Host."""

    port: int = 0
    hosts: list[str] = field(default_factory=list)


@contextlib.contextmanager
def web_server() -> Iterator[Web]:
    web = Web()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            pass

        def do_GET(self) -> None:
            host = (self.headers.get("host") or "").split(":")[0]
            web.hosts.append(host)
            body = f"hello {host}".encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    web.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield web
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest_asyncio.fixture
async def egress() -> AsyncIterator[EgressSupervisor]:
    """The real ``polter egress``, its test hook mapping both web hosts to loopback."""
    supervisor = EgressSupervisor(test_hosts=TEST_HOSTS)
    await supervisor.start()
    try:
        yield supervisor
    finally:
        await supervisor.aclose()


@pytest.fixture
def sockets() -> Iterator[Path]:
    """A short folder for the panes' egress sockets (a Unix socket's path has at most 107 bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="pe-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def holding(token: str) -> Iterator[None]:
    """A process outside every sandbox with ``token`` in its environment, as another pane's CLI has."""
    process = subprocess.Popen([sys.executable, "-c", "import sys; print('up', flush=True); sys.stdin.read()"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**os.environ, "POLTER_TOKEN": token})
    try:
        assert process.stdout is not None and process.stdout.readline() == b"up\n"
        environ = Path(f"/proc/{process.pid}/environ").read_bytes()
        assert token.encode() in environ, "outside every sandbox, the token is in view"
        yield
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=30)


def snapshot(root: Path, skip: tuple[Path, ...] = ()) -> dict[str, bytes | str | None]:
    """Every entry under ``root`` (links not followed) with its content, but those under ``skip``."""
    found: dict[str, bytes | str | None] = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [name for name in dirs if Path(folder, name) not in skip]
        for name in [*dirs, *names]:
            path = Path(folder, name)
            relative = str(path.relative_to(root))
            if path.is_symlink():
                found[relative] = os.readlink(path)
            elif path.is_file():
                found[relative] = path.read_bytes()
            else:
                found[relative] = None
    return found


def shell_call(cli: str, when: str, command: str) -> Rule:
    """The model runs ``command`` through the CLI's own shell tool."""
    tool, key = {"claude-code": ("Bash", "command"), "codex": ("exec_command", "cmd"), "opencode": ("bash", "command")
                 }.get(cli, ("run_shell_command", "command"))
    arguments = {key: command}
    if cli == "opencode":
        arguments["description"] = "Runs the probe"
    return Rule(when=when, call=tool, arguments=arguments)


def results(tool_result: str) -> dict[str, str]:
    assert "PROBE-END" in tool_result, f"the probe did not finish: {tool_result[-3000:]}"
    return dict(re.findall(r"PROBE (\S+) (\S+)", tool_result))


def human_cli_config(cli: RealCli, prepared: PreparedPane, home: Path) -> Path:
    """A file where the human's own CLI would find settings or code (in a folder it reads extensions, commands or
    rules from, or in its config folder): no pane may write it, whatever its role."""
    for state in prepared.homes:
        folder = next(name for name in state.shared if name.endswith("/") and "*" not in name)
        return state.user_folder / folder / "polter-probe.json"
    return cli.adapter.human_config(home)[0] / "polter-probe.json"


WEB_DECISIONS = [("allowed.test", "allow"), ("allowed.test", "allow"), ("denied.test", "deny"), ("denied.test", "deny")]


def web_decisions(gateway: PolterGateway, pane_id: str) -> list[tuple[str | None, str]]:
    """The hosts the pane's connections through the proxy named, with the role's decision (the gateway's audit)."""
    rows = gateway.audit(pane_id)
    return sorted((urlsplit(row["target"]).hostname, row["decision"]) for row in rows if row.get("builtin") == "web")


def run_confined(argv: list[str], env: dict[str, str], cwd: Path, output: Path) -> tuple[int | None, str]:
    """Run the confined CLI to its end, or for at most ``RUN_LIMIT_S``: its exit code (None when it hung) and what it
    printed. Its output goes to a file, which a hung CLI's sandbox cannot hold open; a hung sandbox is killed whole
    (bubblewrap's children live on when bubblewrap alone is killed, as a closed pane's must)."""
    with output.open("w+") as printed:
        process = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=printed,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code: int | None = process.wait(timeout=RUN_LIMIT_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            code = None
        printed.seek(0)
        return code, printed.read()


class Sandboxed:
    """One CLI, its panes confined as a session confines them."""

    def __init__(self, cli: RealCli, gateway: PolterGateway, egress: EgressSupervisor, sockets: Path, tmp_path: Path,
                 home: Path, project: Path, model: FakeModelServer) -> None:
        self.cli, self.gateway, self.egress, self.sockets = cli, gateway, egress, sockets
        self.tmp_path, self.home, self.project, self.model = tmp_path, home, project, model

    def pane(self, pane_id: str, role: str, token: str) -> PaneToPrepare:
        compiled = RoleLibrary.load([self.gateway.roles_dir]).get(role)
        assert compiled is not None, role
        return PaneToPrepare(
            pane_id=pane_id,
            gateway_url=self.gateway.url,
            servers=("time",),
            runtime_dir=self.tmp_path / "runtime" / pane_id,
            cwd=self.project,
            token=token,
            home=self.home,
            test_mode=TestMode(model_base_url=self.model.url, model="gpt-5.5" if self.cli.name == "codex" else None),
            builtins=builtins_policy(compiled, ()),
            skill_decision=self.gateway.skill_policy(role),
            confined=True,
        )

    async def ask(self, pane: PaneToPrepare, role: str, prompt: str) -> str:
        """Run one prompt in the confined pane: the tool result the CLI sent back to the model."""
        adapter = self.cli.adapter
        prepared = adapter.prepare(pane)
        assert prepared.launch.refused is None, prepared.launch.refused
        spec = with_home(prepared.launch, self.home, [self.cli.bin_dir])
        spec = spec.model_copy(update={"env": {name: value for name, value in spec.env.items() if name != "TMPDIR"}})
        before, after = ARGS[self.cli.name]
        argv = [spec.argv[0], *before, *spec.argv[1:], *after, prompt]
        if self.cli.name == "qwen-code":
            argv[argv.index("--approval-mode") + 1] = "yolo"
        spec = spec.model_copy(update={"argv": tuple(argv)})
        model = model_api(adapter.model_endpoints(pane, spec.environment()))
        socket_dir = self.sockets / pane.pane_id
        socket_dir.mkdir(mode=0o700, exist_ok=True)
        self.egress.add_pane(pane.pane_id, socket=str(socket_dir / "egress.sock"), token=pane.token.get_secret_value()
                             if pane.token else "", gateway=self.gateway.url, project=str(self.project), role=role,
                             model_hosts=model.hosts, loopback_ports=model.loopback_ports)
        await self.egress.pane_ready(pane.pane_id)
        root = pane.runtime_dir
        assert self.gateway.pane_socket is not None
        start = len(self.model.requests)
        with RuntimeDir(root):
            write_pane_files(root, prepared.files, prepared.homes)
            facts = PaneFacts(
                project=self.project,
                runtime_dir=root,
                policy=pane.builtins,
                agent=True,
                cli=cli_files(root, prepared, adapter.human_config(self.home),
                              every_clis_config(self.home, adapter)),
                hidden=(self.gateway.state_dir, state_dir(), config_dir(), runtime_dir()),
                gateway_url=self.gateway.url,
                gateway_socket_dir=self.gateway.pane_socket.parent,
                egress_socket_dir=socket_dir,
                model=model,
                home=self.home,
            )
            confined = confine(spec, facts)
            assert confined.refused is None, confined.refused
            code, printed = await asyncio.to_thread(run_confined, list(confined.argv), confined.environment(),
                                                    self.project, self.tmp_path / f"{pane.pane_id}.out")
        seen = [(request.prompt[:60], (request.tool_result or "")[:80]) for request in self.model.requests[start:]]
        assert code is not None, f"{adapter.display_name} hung in its pane; the model saw {seen}; it printed {printed}"
        assert code == 0, printed[-6000:]
        answer = await asyncio.to_thread(
            self.model.wait_for, lambda request: request.tool_result is not None and "PROBE" in request.tool_result,
            30, start=start,
        )
        return answer.tool_result or ""


@pytest.mark.parametrize("name", ["claude-code", "codex", "gemini-cli", "qwen-code", "opencode"])
async def test_a_confined_cli_reaches_only_what_its_role_gives(
    name: str, tmp_path: Path, home: Path, project: Path, egress: EgressSupervisor, sockets: Path
) -> None:
    cli = real_cli(name)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "probe.py").write_text(PROBE)
    if name == "opencode":
        seed_opencode_plugin_sdk(home, project)
    polter = shutil.which("polter", path=str(Path(sys.executable).parent))
    assert polter is not None, "the venv's polter"
    with PolterGateway(tmp_path, ROLES, pane_socket=True) as gateway, web_server() as web, \
            FakeModelServer([]) as model:
        sandboxed = Sandboxed(cli, gateway, egress, sockets, tmp_path, home, project, model)
        researcher_id, researcher_token = gateway.register("prober")
        coder_id, coder_token = gateway.register("coder-prober")
        gateway_file = gateway.state_dir / "gateway.json"
        assert gateway_file.exists()

        prepared = cli.adapter.prepare(sandboxed.pane(researcher_id, "prober", researcher_token))
        cli_config = human_cli_config(cli, prepared, home)
        other_cli = next(path for path in every_clis_config(home, cli.adapter) if path.name != ".claude.json")

        def probe(who: str, pane_id: str, other_token: str) -> Rule:
            """``python3 probe.py WHO``: what it needs is in ``probe-WHO.json`` (the hook reads a short command)."""
            arguments = {"project": str(project), "other_token": other_token, "gateway_file": str(gateway_file),
                         "polter": polter, "pane": pane_id, "gateway_state": str(gateway.state_dir),
                         "raw_port": web.port, "web_port": web.port, "cli_config": str(cli_config),
                         "other_cli": str(other_cli / "polter-probe.json")}
            (project / f"probe-{who}.json").write_text(json.dumps(arguments))
            return shell_call(name, f"probe as {who}", f"python3 probe.py {who}")

        model.rules += [probe("researcher", researcher_id, coder_token), probe("coder", coder_id, researcher_token)]

        before = snapshot(project)
        state = (*(home.user_folder for home in prepared.homes), *prepared.state_folders)  # the CLI's own: writable
        for folder in state:
            folder.mkdir(parents=True, exist_ok=True)
        home_before = snapshot(home, skip=state)
        with holding(coder_token):
            output = await sandboxed.ask(sandboxed.pane(researcher_id, "prober", researcher_token), "prober",
                                         "please run the probe as researcher")
        assert results(output) == DENIED, output
        assert snapshot(project) == before, "the researcher's pane changed the project"
        home_after = snapshot(home, skip=state)
        made = {str(path.relative_to(home)) for folder in prepared.made_folders for path in (folder, *folder.parents)
                if path.is_relative_to(home) and path != home}  # fmt: skip (made by Polter before the start, empty)
        assert all(folder.is_dir() for folder in prepared.made_folders), prepared.made_folders
        assert {path: content for path, content in home_after.items() if path not in made or path in home_before} == (
            home_before
        ), "the researcher's pane changed the home"
        assert web.hosts.count("allowed.test") == 2 and "denied.test" not in web.hosts, web.hosts
        assert {pane["id"]: pane["role"] for pane in json.loads(gateway.polter("panes", "list", "--json"))} == {
            researcher_id: "prober", coder_id: "coder-prober"}
        # The role decided the four connections, and the CLI tried no other host through the proxy.
        assert web_decisions(gateway, researcher_id) == WEB_DECISIONS

        with holding(researcher_token):
            output = await sandboxed.ask(sandboxed.pane(coder_id, "coder-prober", coder_token), "coder-prober",
                                         "please run the probe as coder")
        assert results(output) == {**DENIED, "write-project": "DONE"}, output
        assert (project / "notes.txt").read_text() == "written from inside the pane"
        assert not (project / ".git" / "hooks" / "pre-commit").exists()
        assert not cli_config.exists(), "a pane wrote what the human's own CLI runs"
        assert not (other_cli / "polter-probe.json").exists(), "a pane wrote what another CLI of the human's runs"
        assert "denied.test" not in web.hosts, web.hosts
        assert web_decisions(gateway, coder_id) == WEB_DECISIONS
