"""A pane's sandbox with real processes: bubblewrap around a program that tries what an agent would.

Every attempt runs a program (``python3 -c``, not a shell builtin) inside the sandbox that :func:`sandboxed`
builds, and is checked from outside: what it printed and what changed on disk. The same tests run as root
(CI) and, through ``setpriv``, as an ordinary user (``nobody``), since users are.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.loopback import answering

import polter
from polter.sandbox.bwrap import PaneSandbox, program_folders, programs_run_outside, sandboxed, unavailable
from polter.sandbox.rules import FolderRule, WriteRules, write_rules
from polter.terminal.launch import LaunchSpec

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="platform: bubblewrap needs Linux")

PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
READ_ONLY = WriteRules(project=False, home=False, folders=())
CODER = write_rules("allow", [("write(@outside)", "ask")], project="/p", home="/h")


@pytest.fixture(scope="module", autouse=True)
def sandbox_works() -> None:
    missing = unavailable()
    assert missing is None, f"the tests need the pane sandbox here: {missing} (make test installs bubblewrap, socat)"


class Layout:
    """A pane's world on disk: project (a git repository), home, Polter's state with this and another pane's
    runtime dir, a sessions folder with a socket."""

    def __init__(self, root: Path, owner: int | None = None) -> None:
        self.root = root
        self.owner = owner
        self.project = root / "project"
        self.home = root / "home"
        self.state = root / "state"
        self.runtime = self.state / "run" / "1" / "p1"
        self.other_runtime = self.state / "run" / "1" / "p2"
        self.sessions = root / "sessions"
        for folder in (self.project, self.home, self.runtime, self.other_runtime, self.sessions):
            folder.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        (self.project / "README").write_text("hello\n")
        (self.home / ".bashrc").write_text("# the human's\n")
        (self.state / "gateway.json").write_text('{"admin_token": "SECRET-ADMIN"}')
        (self.other_runtime / "token").write_text("SECRET-OTHER-PANE")
        (self.runtime / "settings.json").write_text("{}")
        if owner is not None:
            subprocess.run(["chown", "-R", f"{owner}:{owner}", str(root)], check=True)
            root.chmod(0o755)

    def reachable(self, folder: Path) -> bool:
        """Whether the layout's owner can reach ``folder`` (a checkout in a private folder of root's is not
        nobody's: the sandbox runs as the owner)."""
        if self.owner is None:
            return True
        return all(os.stat(part).st_mode & 0o005 for part in (folder, *folder.parents) if part.exists())

    def sandbox(self, rules: WriteRules, **more: object) -> PaneSandbox:
        return PaneSandbox(
            project=self.project,
            home=self.home,
            rules=rules,
            runtime_dir=self.runtime,
            polter_files=(self.runtime / "settings.json",),
            hidden=(self.state, self.sessions),
            keep_visible=tuple(filter(self.reachable, program_folders(dict(os.environ), [PYTHON]))),
            **more,  # type: ignore[arg-type]
        )


def run(sandbox: PaneSandbox, code: str, *, as_user: int | None = None) -> str:
    """Run ``python3 -c code`` in the sandbox (as ``as_user`` when given); its output, stderr included."""
    spec = sandboxed(LaunchSpec(argv=(PYTHON, "-c", textwrap.dedent(code)), cwd=sandbox.project), sandbox)
    argv = list(spec.argv)
    if as_user is not None:
        argv = ["setpriv", f"--reuid={as_user}", f"--regid={as_user}", "--clear-groups", *argv]
    done = subprocess.run(
        argv, env=spec.environment(), cwd=sandbox.project, capture_output=True, text=True, timeout=60, check=False
    )
    return done.stdout + done.stderr


TRY_WRITE = """
import sys
for path in sys.argv[1:] or {paths!r}:
    try:
        with open(path, "a") as handle:
            handle.write("x")
        print("WROTE", path)
    except OSError as error:
        print("REFUSED", path, error.strerror)
"""


def attempt_writes(sandbox: PaneSandbox, *paths: Path, as_user: int | None = None) -> dict[str, bool]:
    output = run(sandbox, TRY_WRITE.format(paths=[str(path) for path in paths]), as_user=as_user)
    written = {str(path): f"WROTE {path}" in output for path in paths}
    assert all(f"WROTE {path}" in output or f"REFUSED {path}" in output for path in paths), output
    return written


USERS = [pytest.param(None, id="as-root" if os.geteuid() == 0 else "as-user")]
if os.geteuid() == 0:
    USERS.append(pytest.param(65534, id="as-nobody"))


@pytest.fixture(params=USERS)
def user(request: pytest.FixtureRequest) -> int | None:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def layout(tmp_path: Path, user: int | None) -> Layout:
    if user is not None:  # a folder nobody can reach: pytest's own are private to root
        root = Path(os.environ.get("TMPDIR", "/tmp")) / f"polter-sandbox-{os.getpid()}-{tmp_path.name}"
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir()
        yield Layout(root, owner=user)
        shutil.rmtree(root, ignore_errors=True)
    else:
        yield Layout(tmp_path)


def test_a_role_that_writes_nothing_writes_nothing(layout: Layout, user: int | None) -> None:
    """researcher: not the project, not the home, not the git hooks; a private /tmp is the pane's scratch."""
    targets = [layout.project / "notes.txt", layout.home / "notes.txt", layout.project / ".git/hooks/pre-commit"]
    scratch = Path(f"/tmp/polter-scratch-{os.getpid()}-{layout.root.name}")
    written = attempt_writes(layout.sandbox(READ_ONLY), *targets, scratch, as_user=user)
    assert written == {**{str(path): False for path in targets}, str(scratch): True}
    assert not any(path.exists() for path in targets)
    assert not scratch.exists(), "the pane's /tmp is its own"


def test_the_state_a_cli_keeps_in_place_stays_writable(layout: Layout, user: int | None) -> None:
    """A CLI that keeps its state where it always does (opencode's ``~/.local/share/opencode``): that folder, named
    as (folder, folder), is writable under a role that writes nothing; the rest of the home is not."""
    data = layout.home / ".local" / "share" / "cli"
    data.mkdir(parents=True)
    if user is not None:
        subprocess.run(["chown", "-R", f"{user}:{user}", str(layout.home)], check=True)
    sandbox = layout.sandbox(READ_ONLY, state_paths=(data,))
    written = attempt_writes(sandbox, data / "cli.log", layout.home / ".local" / "share" / "other", as_user=user)
    assert written == {str(data / "cli.log"): True, str(layout.home / ".local" / "share" / "other"): False}


def test_coder_writes_the_project_and_never_a_protected_target(layout: Layout, user: int | None) -> None:
    rules = write_rules("allow", [("write(@outside)", "ask")], project=str(layout.project), home=str(layout.home))
    allowed = [layout.project / "src.py", layout.home / "notes.txt"]
    protected = [
        layout.project / ".git/hooks/pre-commit",
        layout.project / ".git/config",
        layout.home / ".bashrc",
        layout.runtime / "settings.json",
    ]
    before = {path: path.read_bytes() if path.exists() else None for path in protected}
    written = attempt_writes(layout.sandbox(rules), *allowed, *protected, as_user=user)
    assert written == {**{str(path): True for path in allowed}, **{str(path): False for path in protected}}
    assert {path: path.read_bytes() if path.exists() else None for path in protected} == before


def test_folders_named_by_the_role(layout: Layout, user: int | None) -> None:
    """``write(docs/**)`` opens one folder of a read-only project; ``write(src/gen/**)`` denied closes one of a
    writable project (deny wins over a broader allow)."""
    for name in ("docs", "src/gen"):
        (layout.project / name).mkdir(parents=True)
    if user is not None:
        subprocess.run(["chown", "-R", f"{user}:{user}", str(layout.project)], check=True)
    only_docs = write_rules("deny", [("write(docs/**)", "allow")], project=str(layout.project), home=str(layout.home))
    written = attempt_writes(
        layout.sandbox(only_docs), layout.project / "docs/a.md", layout.project / "b.md", as_user=user
    )
    assert written == {str(layout.project / "docs/a.md"): True, str(layout.project / "b.md"): False}
    not_generated = write_rules(
        "allow", [("write(src/gen/**)", "deny")], project=str(layout.project), home=str(layout.home)
    )
    written = attempt_writes(
        layout.sandbox(not_generated), layout.project / "src/a.py", layout.project / "src/gen/b", as_user=user
    )
    assert written == {str(layout.project / "src/a.py"): True, str(layout.project / "src/gen/b"): False}


READ_SECRETS = """
import os, glob
for path in {paths!r}:
    try:
        print("READ", path, open(path).read())
    except OSError as error:
        print("CANNOT", path, error.strerror)
print("LISTED", sorted(os.listdir({state!r})))
"""


def test_polter_state_other_panes_and_sessions_are_out_of_view(layout: Layout, user: int | None) -> None:
    paths = [layout.state / "gateway.json", layout.other_runtime / "token", f"/proc/1/root{layout.state}/gateway.json"]
    code = READ_SECRETS.format(paths=[str(p) for p in paths], state=str(layout.state))
    output = run(layout.sandbox(CODER), code, as_user=user)
    assert "SECRET" not in output, output
    assert all(f"CANNOT {path}" in output for path in paths), output
    assert "LISTED ['run']" in output, output  # only the way to the pane's own runtime dir


PROCESSES = """
import os
pids = sorted(int(name) for name in os.listdir("/proc") if name.isdigit())
print("PIDS", len(pids), max(pids) < 1000)
try:
    os.kill({outside}, 0)
    print("SIGNALLED outside")
except ProcessLookupError:
    print("NO SUCH PROCESS")
for pid in pids:
    try:
        if b"OUTSIDE-SECRET" in open(f"/proc/{{pid}}/environ", "rb").read():
            print("FOUND THE SECRET")
    except OSError:
        pass
"""


def test_a_pane_sees_only_its_own_processes(layout: Layout, user: int | None) -> None:
    outside = subprocess.Popen(["sleep", "60"], env={**os.environ, "POLTER_TOKEN": "OUTSIDE-SECRET"})
    try:
        output = run(layout.sandbox(CODER), PROCESSES.format(outside=outside.pid), as_user=user)
    finally:
        outside.kill()
        outside.wait()
    assert "NO SUCH PROCESS" in output and "FOUND THE SECRET" not in output, output
    assert "SIGNALLED" not in output, output


ESCAPES = """
import ctypes, os, subprocess
libc = ctypes.CDLL(None, use_errno=True)
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
print("CAPS", status["CapEff"].strip(), "NNP", status["NoNewPrivs"].strip())
print("MOUNT", libc.mount(b"none", b"/tmp", b"tmpfs", 0, None), os.strerror(ctypes.get_errno()))
CLONE_NEWUSER = 0x10000000
print("UNSHARE", libc.unshare(CLONE_NEWUSER), os.strerror(ctypes.get_errno()))
PTRACE_ATTACH = 16
print("PTRACE", libc.ptrace(PTRACE_ATTACH, {outside}, None, None), os.strerror(ctypes.get_errno()))
print("CHROOT-ESCAPE", os.path.exists("/proc/1/root{state}/gateway.json"))
done = subprocess.run(["unshare", "-r", "true"], capture_output=True, text=True)
print("UNSHARE-CMD", done.returncode)
"""


def test_escapes_fail(layout: Layout, user: int | None) -> None:
    """No capabilities, no new privileges (a setuid program does not elevate), no mount, no user namespace of
    its own (so no nested sandbox to gain capabilities in), no ptrace of a process outside."""
    outside = subprocess.Popen(["sleep", "60"])
    try:
        output = run(layout.sandbox(CODER), ESCAPES.format(state=layout.state, outside=outside.pid), as_user=user)
    finally:
        outside.kill()
        outside.wait()
    assert "CAPS 0000000000000000 NNP 1" in output, output
    assert "MOUNT -1" in output and "UNSHARE -1" in output and "PTRACE -1" in output, output
    assert "CHROOT-ESCAPE False" in output and "UNSHARE-CMD 0" not in output, output


@pytest.fixture
def loopback_service() -> Iterator[int]:
    """A TCP service on the machine's loopback that no pane was given."""
    with answering(socket.create_server(("127.0.0.1", 0)), b"REACHED") as server:
        yield server.getsockname()[1]


@pytest.fixture
def gateway_socket(layout: Layout, user: int | None) -> Iterator[Path]:
    """A Unix socket standing in for the gateway's panes socket: it answers GATEWAY."""
    folder = layout.root / "gateway-socket"
    folder.mkdir()
    path = folder / "gateway.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    if user is not None:
        os.chown(folder, user, user)
        os.chown(path, user, user)
    with answering(server, b"GATEWAY"):
        yield folder


CONNECT = """
import socket
import sqlite3
for port in {ports!r}:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
            print("PORT", port, connection.recv(100).decode() or "nothing")
    except OSError as error:
        print("PORT", port, "refused", error.strerror)
"""


def test_the_network_reaches_the_gateway_and_nothing_else(
    layout: Layout, user: int | None, loopback_service: int, gateway_socket: Path
) -> None:
    gateway_port = 47111 if loopback_service != 47111 else 47112
    sandbox = layout.sandbox(CODER, gateway_port=gateway_port, gateway_socket_dir=gateway_socket)
    output = run(sandbox, CONNECT.format(ports=[gateway_port, loopback_service]), as_user=user)
    assert f"PORT {gateway_port} GATEWAY" in output, output
    assert f"PORT {loopback_service} refused" in output, output


def test_abstract_unix_sockets_outside_are_out_of_reach(layout: Layout, user: int | None) -> None:
    """An abstract Unix socket (no file: X11's, D-Bus's, many agents') belongs to a network namespace: one the user
    listens on outside is not there for the pane, whatever it is named."""
    name = f"\0polter-test-{os.getpid()}-{layout.root.name}"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(name)
    listener.listen()
    try:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.connect(name)  # outside: there
        probe.close()
        code = f"""
            import socket
            try:
                socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect({name!r})
                print("CONNECTED")
            except OSError as error:
                print("REFUSED", error.strerror)
        """
        output = run(layout.sandbox(CODER), code, as_user=user)
        assert "REFUSED" in output and "CONNECTED" not in output, output
    finally:
        listener.close()


def test_a_linked_worktree_commits_and_its_repositorys_hooks_stay_read_only(layout: Layout, user: int | None) -> None:
    """A pane in a subfolder of a linked worktree (both under the hidden /tmp): git finds the repository, a commit
    writes the repository's common dir, and the common dir's hooks and config are still read-only."""
    main = layout.project
    git = ["git", "-c", "safe.directory=*", "-c", "user.name=a", "-c", "user.email=a@b"]
    subprocess.run([*git, "-C", str(main), "commit", "-q", "--allow-empty", "-m", "init"], check=True)
    worktree = layout.root / "worktree"
    subprocess.run([*git, "-C", str(main), "worktree", "add", "-q", str(worktree), "-b", "feature"], check=True)
    (worktree / "src").mkdir()
    if user is not None:
        subprocess.run(["chown", "-R", f"{user}:{user}", str(layout.root)], check=True)
    rules = write_rules("allow", [], project=str(worktree / "src"), home=str(layout.home))
    sandbox = PaneSandbox(**{**layout.sandbox(rules).__dict__, "project": worktree / "src"})
    code = f"""
import subprocess
def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True)
open("new.py", "w").write("x")
print("ADD", git("add", "new.py").returncode)
done = git("-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "new")
print("COMMIT", done.returncode, done.stderr.strip())
for path in ("{main}/.git/hooks/pre-commit", "{main}/.git/config"):
    try:
        open(path, "a").write("x")
        print("WROTE", path)
    except OSError:
        print("REFUSED", path)
"""
    output = run(sandbox, code, as_user=user)
    assert "ADD 0" in output and "COMMIT 0" in output, output
    assert "WROTE" not in output, output
    log = subprocess.run([*git, "-C", str(worktree), "log", "--format=%s"], capture_output=True, text=True).stdout
    assert log.split() == ["new", "init"], log


async def test_closing_a_pane_hangs_its_program_up_and_lets_it_clean_up(tmp_path: Path) -> None:
    """As a closed terminal does: the program gets SIGHUP and finishes its trap (a lock file removed, a file
    written) before its namespace ends; bubblewrap dying first must not kill it outright."""
    import asyncio

    from polter.host.pty import PtyProcess

    layout = Layout(tmp_path)
    rules = write_rules("allow", [], project=str(layout.project), home=str(layout.home))
    bye = layout.project / "bye"
    script = f"trap 'sleep 0.2; echo bye > {bye}; exit' HUP; echo ready; while :; do sleep 1 & wait $!; done"
    spec = sandboxed(LaunchSpec(argv=("/bin/bash", "--norc", "-c", script), cwd=layout.project), layout.sandbox(rules))
    seen = bytearray()
    ready = asyncio.Event()

    def output(data: bytes) -> None:
        seen.extend(data)
        if b"ready" in seen:
            ready.set()

    process = PtyProcess.spawn(spec, columns=80, lines=24, on_output=output, on_exit=lambda _code: None)
    await asyncio.wait_for(ready.wait(), 30)
    assert process.program_pid is not None and process.program_pid != process.pid
    await process.aclose()
    assert bye.read_text() == "bye\n"


def test_a_clis_state_is_writable_entry_by_entry_and_its_settings_are_not(layout: Layout, user: int | None) -> None:
    """The CLI's folder in the home (``~/.claude``) holds its state (writable: each kept entry) and the user's own
    settings, which run code in the human's sessions outside Polter (read-only, and no new file beside them)."""
    folder = layout.home / ".claude"
    (folder / "projects").mkdir(parents=True)
    (folder / "history.jsonl").write_text("")
    (folder / "settings.json").write_text("{}")
    if user is not None:
        subprocess.run(["chown", "-R", f"{user}:{user}", str(folder)], check=True)
    sandbox = layout.sandbox(READ_ONLY, state_paths=(folder / "projects", folder / "history.jsonl"))
    targets = [
        folder / "projects" / "a.jsonl",
        folder / "history.jsonl",
        folder / "settings.json",
        folder / "hooks.json",
    ]
    written = attempt_writes(sandbox, *targets, as_user=user)
    assert written == {str(targets[0]): True, str(targets[1]): True, str(targets[2]): False, str(targets[3]): False}
    assert (folder / "settings.json").read_text() == "{}" and not (folder / "hooks.json").exists()


def test_a_clis_settings_are_read_only_under_a_role_that_writes_the_home(layout: Layout, user: int | None) -> None:
    """coder writes the home, but not the CLI's folder of settings and code (held: ``~/.claude``), but for the CLI's
    state in it; and its state file that also holds settings (``~/.claude.json``) is the pane's own copy: what the
    pane writes there never reaches the user's."""
    folder = layout.home / ".claude"
    (folder / "projects").mkdir(parents=True)
    (folder / "settings.json").write_text("{}")
    state_file = layout.home / ".claude.json"
    state_file.write_text('{"mcpServers": {}}')
    copy = layout.runtime / "private" / "claude.json"
    copy.parent.mkdir()
    copy.write_text('{"mcpServers": {}}')
    if user is not None:
        subprocess.run(["chown", "-R", f"{user}:{user}", str(layout.home), str(layout.runtime)], check=True)
    rules = write_rules("allow", [], project=str(layout.project), home=str(layout.home))
    sandbox = layout.sandbox(
        rules, state_paths=(folder / "projects",), held=(folder,), private_copies=((copy, state_file),)
    )
    targets = [
        folder / "projects" / "a.jsonl",
        layout.home / "notes.txt",
        folder / "settings.json",
        folder / "hooks.json",
        state_file,
    ]
    written = attempt_writes(sandbox, *targets, as_user=user)
    assert written == {
        str(targets[0]): True,
        str(targets[1]): True,
        str(targets[2]): False,
        str(targets[3]): False,
        str(targets[4]): True,
    }
    assert (folder / "settings.json").read_text() == "{}" and not (folder / "hooks.json").exists()
    assert state_file.read_text() == '{"mcpServers": {}}', "the user's own file is untouched"
    assert copy.read_text() == '{"mcpServers": {}}x', "the pane wrote its copy"


def test_programs_that_run_outside_every_pane_are_read_only(layout: Layout, user: int | None) -> None:
    """coder writes the home, but not its folders on ``PATH`` or of the user's Python packages (the human's shells
    run what they hold), nor the Python and the Polter that Polter's own processes run, even where a role's rule
    would open them (a planted ``sitecustomize.py`` would run in the session host, outside every sandbox)."""
    shims, local_bin = layout.home / ".pyenv" / "shims", layout.home / ".local" / "bin"
    for folder in (shims, local_bin, layout.home / ".local" / "lib"):
        folder.mkdir(parents=True)
    if user is not None:
        subprocess.run(["chown", "-R", f"{user}:{user}", str(layout.home)], check=True)
    env = {"PATH": f"{shims}:{layout.project}/node_modules/.bin:/usr/bin"}
    interpreter, package = Path(sys.base_prefix).resolve(), Path(polter.__file__).resolve().parent
    protected = programs_run_outside(env, layout.home, layout.project)
    assert layout.home not in protected and {interpreter, package} <= set(protected)
    assert Path(f"{layout.project}/node_modules/.bin") not in protected, "not the home's: as the role says"
    ours = [folder for folder in (interpreter, package) if layout.reachable(folder)]  # (as nobody: not in view)
    opened = tuple(FolderRule(path=str(folder), writable=True, pattern=f"write({folder}/**)") for folder in ours)
    rules = WriteRules(project=True, home=True, folders=opened)
    sandbox = layout.sandbox(rules, protected=tuple(filter(layout.reachable, protected)))
    targets = [
        layout.home / "notes.txt",
        shims / "git",
        local_bin / "ls",
        layout.home / ".local" / "lib" / "x.pth",
        *(folder / "polter-probe" for folder in ours),
    ]
    written = attempt_writes(sandbox, *targets, as_user=user)
    assert written == {str(targets[0]): True, **{str(path): False for path in targets[1:]}}
    assert not any(path.exists() for path in targets[1:])


SQLITE_WRITE = """
import sqlite3
try:
    database = sqlite3.connect({path!r}, isolation_level=None)
    database.execute("CREATE TABLE IF NOT EXISTS threads (id TEXT)")
    database.execute("INSERT INTO threads VALUES ('t1')")
    database.close()
    print("written")
except sqlite3.Error as exc:
    print("refused:", exc)
"""


def test_a_kept_sqlite_database_is_writable_in_a_folder_held_read_only(layout: Layout, user: int | None) -> None:
    """SQLite creates and deletes its journal beside the database, which a folder held read-only refuses ("unable to
    open database file": Codex's state_5.sqlite in ~/.codex); the database made a WAL one and its -wal and -shm held
    writable, the CLI writes it, and the user's database has what it wrote."""
    from polter.host.confined import sqlite_in_place

    folder = layout.home / ".codex"
    folder.mkdir(parents=True)
    bare, kept = folder / "logs_2.sqlite", folder / "state_5.sqlite"
    bare.touch()
    kept.touch()  # as a first start leaves it: empty
    paths = sqlite_in_place(kept)
    if user is not None:
        subprocess.run(["chown", "-R", f"{user}:{user}", str(folder)], check=True)
    sandbox = layout.sandbox(READ_ONLY, state_paths=(bare, *paths), held=(folder,))
    assert "refused: unable to open database file" in run(sandbox, SQLITE_WRITE.format(path=str(bare)), as_user=user)
    assert "written" in run(sandbox, SQLITE_WRITE.format(path=str(kept)), as_user=user)
    with contextlib.closing(sqlite3.connect(kept)) as database:
        assert database.execute("SELECT id FROM threads").fetchall() == [("t1",)]
