"""A logout that removes the login's runtime dir (logind deletes ``$XDG_RUNTIME_DIR``) under a running session
leaves its sandboxed panes their way to the gateway and to the egress proxy: a pane's sandbox mounts the folders of
those sockets, so they must be where a logout does not delete them (a socket made again elsewhere is out of a
running sandbox's view).

The session is a real daemon (``start_host``), its one pane a shell in the ``coder`` sandbox; the human's
``polter send`` types into it, and it writes what ``polter tools`` (an MCP call to the gateway, as the pane) and
the proxy answered into its project. As root (CI) and, through ``setpriv``, as an ordinary user (``nobody``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.panes import BASH
from support.waiting import wait_until

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="platform: the sandbox needs Linux"),
]

VENV_BIN = Path(sys.executable).parent
CHECKOUT = Path(__file__).resolve().parents[2]
USERS = [pytest.param(None, id="as-root" if os.geteuid() == 0 else "as-user")]
if os.geteuid() == 0:
    USERS.append(pytest.param(65534, id="as-nobody"))

WINDOW = """
import asyncio
from polter.wire import messages as wire
from polter.wire.client import SessionClient
from polter.wire.registry import session_files

async def main():
    drawn = asyncio.Event()
    panes = asyncio.Queue()

    def on_event(event):
        if isinstance(event, wire.PaneAdded):
            panes.put_nowait(event.pane.id)
        if isinstance(event, wire.FrameEvent) and event.frame.columns == 100 and "$" in event.frame.model_dump_json():
            drawn.set()

    client = await SessionClient.connect(session_files("away"), on_event=on_event)
    for pane in client.state.panes:
        panes.put_nowait(pane.id)
    client.send(wire.ResizeInput(pane=await asyncio.wait_for(panes.get(), 60), columns=100, lines=30))
    await asyncio.wait_for(drawn.wait(), 60)
    await client.aclose()

asyncio.run(main())
"""
"""A window that attaches as the user, gives the pane its size (its program starts at the first one) and leaves
once the shell's prompt shows."""

PROXY = "curl -s --noproxy '' -o /dev/null -w 'PROXY-%{http_code}-END' -x \"$HTTPS_PROXY\" http://127.0.0.1:1/"
"""The egress proxy itself refuses a loopback port no CLI declared: a 403 is the proxy answering."""


@dataclass
class Login:
    """A user's login: its runtime dir (which logout removes), the folder sessions fall back to, Polter's dirs."""

    root: Path
    user: int | None
    python: str

    @property
    def xdg(self) -> Path:
        return self.root / "xdg"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def project(self) -> Path:
        return self.root / "project"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("POLTER_") and k != "XDG_RUNTIME_DIR"}
        return env | {
            "PATH": f"{Path(self.python).parent}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.root / "home"),
            "XDG_RUNTIME_DIR": str(self.xdg),
            "POLTER_TMPDIR": str(self.tmp),
            "POLTER_CONFIG_DIR": str(self.root / "config"),
            "POLTER_STATE_DIR": str(self.root / "state"),
            "POLTER_WORKTREES_DIR": str(self.root / "worktrees"),
            "PS1": "$ ",
        }

    def run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        prefix = (
            [] if self.user is None else ["setpriv", f"--reuid={self.user}", f"--regid={self.user}", "--clear-groups"]
        )
        return subprocess.run(
            [*prefix, *argv], env=self.env(), cwd=self.root, capture_output=True, text=True, timeout=120, check=False
        )

    def polter(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run(self.python, "-m", "polter", *args)

    def type_into_pane(self, line: str) -> None:
        sent = self.polter("send", "1", line, "--session", "away")
        assert sent.returncode == 0, sent.stderr


def _reachable(folder: Path) -> bool:
    return all(os.stat(part).st_mode & 0o005 for part in (folder, *folder.parents))


def _python_for_others(folder: Path) -> str:
    """A Python an ordinary user can run Polter with: this one where they can reach it, else a venv of the system's
    Python (the same minor version) with this venv's libraries and this checkout's Polter inside it (root's own
    interpreter, under ``/root``, is out of their reach, and so is a checkout in a private folder, as a clean
    clone in ``mktemp -d`` is)."""
    here = Path(sys.executable)
    if all(_reachable(path) for path in (here.parent, Path(sys.base_prefix), VENV_BIN.parent, CHECKOUT)):
        return sys.executable
    system = Path("/usr/bin/python3")
    version = subprocess.run([system, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True)
    assert version.stdout.strip() == str(sys.version_info[:2]), f"an ordinary user's Python {sys.version_info[:2]}"
    venv = folder / "venv"
    subprocess.run([system, "-m", "venv", "--without-pip", str(venv)], check=True)
    [site] = venv.glob("lib/python*/site-packages")
    [ours] = VENV_BIN.parent.glob("lib/python*/site-packages")
    if _reachable(ours) and _reachable(CHECKOUT):
        (site / "polter-tests.pth").write_text(f"import site; site.addsitedir({str(ours)!r})\n")  # (its .pth files too)
    else:  # inside the venv, which the panes' sandboxes show as Polter's own (the system's /tmp they do not)
        _link_tree(ours, site / "libraries")
        for name in ("polter", "plugins", "roles"):
            _link_tree(CHECKOUT / name, venv / "checkout" / name)
        (site / "polter-tests.pth").write_text(
            f"import site, sys; site.addsitedir({str(site / 'libraries')!r}); sys.path.insert(0, {str(venv / 'checkout')!r})\n"
        )
    script = venv / "bin" / "polter"
    script.write_text(f"#!{venv / 'bin' / 'python'}\nimport sys\nfrom polter.cli import main\nsys.exit(main())\n")
    script.chmod(0o755)
    return str(venv / "bin" / "python")


def _link_tree(source: Path, target: Path) -> None:
    """``source`` again at ``target``, as hard links to its files (a copy across file systems): readable by whoever
    may read the files, wherever the folders above ``source`` are private."""
    try:
        shutil.copytree(source, target, symlinks=True, copy_function=os.link)
    except (OSError, shutil.Error):
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target, symlinks=True)


@pytest.fixture(params=USERS)
def login(request: pytest.FixtureRequest) -> Iterator[Login]:
    user: int | None = request.param
    root = Path(os.environ.get("TMPDIR", "/tmp")) / f"pl-{os.getpid()}-{request.node.callspec.id}"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(mode=0o755)
    here = Login(root, user, sys.executable if user is None else _python_for_others(root))
    for name in ("home", "config", "state", "worktrees", "xdg", "tmp", "project"):
        (root / name).mkdir(mode=0o700 if name in ("xdg", "tmp") else 0o755)
    subprocess.run(["git", "init", "-q", str(here.project)], check=True)
    (root / "config" / "polter.toml").write_text(
        f'[[panes]]\nadapter = "shell"\nrole = "coder"\ncwd = "{here.project}"\n'
        f'command = ["{BASH}", "--norc", "--noprofile"]\n'
    )
    if user is not None:
        subprocess.run(["chown", "-R", f"{user}:{user}", str(root)], check=True)
    try:
        yield here
    finally:
        here.polter("kill", "away")
        shutil.rmtree(root, ignore_errors=True)


def written(login: Login, name: str) -> str:
    """What the pane wrote into ``name`` in its project (once it wrote its closing ``END``)."""
    path = login.project / name
    return path.read_text() if path.is_file() else ""


async def test_sandboxed_panes_keep_the_gateway_and_the_proxy_after_a_logout_removes_the_runtime_dir(
    login: Login,
) -> None:
    started = login.run(login.python, "-c", "from polter.host.daemon import start_host; start_host('away', [])")
    assert started.returncode == 0, started.stderr
    shown = login.run(login.python, "-c", WINDOW)
    assert shown.returncode == 0, shown.stderr

    def check(turn: int) -> None:
        login.type_into_pane(
            f"polter tools > tools-{turn}.txt 2>&1; {PROXY} > proxy-{turn}.txt; echo END >> proxy-{turn}.txt"
        )

    check(1)
    await wait_until(lambda: written(login, "proxy-1.txt").endswith("END\n"), timeout=90,
                     message=lambda: f"the pane's first answers: {written(login, 'tools-1.txt')}")  # fmt: skip
    assert "coder" in written(login, "tools-1.txt"), written(login, "tools-1.txt")
    assert written(login, "proxy-1.txt").startswith("PROXY-403-END"), written(login, "proxy-1.txt")

    shutil.rmtree(login.xdg)  # the last login ended: logind removed the runtime dir
    uid = os.getuid() if login.user is None else login.user
    fallback = login.tmp / f"polter-{uid}" / "sessions" / "away.sock"
    await wait_until(fallback.is_socket, timeout=30, message="the session's socket made again in the fallback")
    login.xdg.mkdir(mode=0o700)  # the next login's runtime dir: logind makes it again, empty
    if login.user is not None:
        os.chown(login.xdg, login.user, login.user)

    check(2)
    await wait_until(lambda: written(login, "proxy-2.txt").endswith("END\n"), timeout=90,
                     message=lambda: f"the pane's answers after logout: {written(login, 'tools-2.txt')}")  # fmt: skip
    assert "coder" in written(login, "tools-2.txt"), written(login, "tools-2.txt")
    assert written(login, "proxy-2.txt").startswith("PROXY-403-END"), written(login, "proxy-2.txt")
