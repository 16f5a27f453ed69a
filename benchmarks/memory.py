"""The memory of everything Polter runs — the window, the session host, the gateway and the egress proxy — at start and
with 4 panes of 10,000 lines of scrollback each, against references measured in the same run.

For this tree and a reference commit (``--reference``, default ``main``, run from a ``git archive`` of
it with the same interpreter and packages), each with its bytecode compiled first (as a user's is after
the first start), one after the other:

1. a real session: the host daemon (started as ``polter`` starts it) with four shell agent panes under
   a role, so the gateway runs as it does for users, and a real ``polter attach`` in a terminal (a PTY
   of 160x45);
2. **at start**: once the window shows the four panes, each waiting for a go, the four processes'
   memory (the gateway's is its memory before any call);
3. **full**: each pane then prints 12,000 coloured lines, so its scrollback is full (10,000 lines);
   once every pane shows its last line and the host's memory has settled (it compacts quiet
   scrollback), the four processes' memory again;
4. what each process has imported at that moment (a ``sitecustomize`` on the session's ``PYTHONPATH``
   writes ``sys.modules`` on SIGUSR2), and, for this tree, what those modules cost by package: each
   list imported again in a fresh interpreter that measures the RSS each module's own execution adds
   (its nested imports counted where they run).

Figures from ``/proc/PID/smaps_rollup``: RSS counts every page the process maps (shared libraries in
full, in every process); PSS shares shared pages out between the processes that map them, so the PSS
of the four processes adds up to what they cost together; USS is the pages no other process maps.
References of the same run: a bare interpreter that imported asyncio, and an empty Textual app in a
terminal. Target: everything under 100 MB (PSS is the fair sum).

Run: ``.venv/bin/python benchmarks/memory.py [--reference REF] [--imports N]``. The last line is JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _sessions import BASH, ROOT, children, command_line, private_dirs, until, work_dir  # noqa: E402

from polter.host.hosted_terminal import HostedTerminal  # noqa: E402
from polter.terminal.launch import LaunchSpec  # noqa: E402

PANES = 4
LINES = 12_000
SIZE = (160, 45)
TARGET_MB = 100.0
PROCESSES = ("window", "host", "gateway", "egress")
"""Every Polter process of a session; the egress proxy starts with the first sandboxed pane."""
MOMENTS = ("start", "full")

SITECUSTOMIZE = """
import os, signal, sys

def _write_modules(signum, frame):
    with open(os.path.join(os.environ["POLTER_MEMORY_PROBE"], f"{os.getpid()}.modules"), "w") as out:
        out.write("\\n".join(list(sys.modules)))

if os.environ.get("POLTER_MEMORY_PROBE"):
    signal.signal(signal.SIGUSR2, _write_modules)
"""
"""On the session's ``PYTHONPATH``: every Python process of it writes the modules it has imported on SIGUSR2."""

SELF_COST = """
import importlib, importlib.abc, sys, collections, json
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4
own, stack = collections.Counter(), []
class Measured(importlib.abc.Loader):
    def __init__(self, inner): self.inner = inner
    def create_module(self, spec):
        stack.append([rss(), 0])
        try: return self.inner.create_module(spec)
        finally:
            start, _ = stack.pop(); self.created = rss() - start
    def exec_module(self, module):
        stack.append([rss() - self.created, 0])
        try: self.inner.exec_module(module)
        finally:
            start, nested = stack.pop(); total = rss() - start
            own[module.__name__] += total - nested
            if stack: stack[-1][1] += total
class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        for finder in sys.meta_path:
            if finder is not self and hasattr(finder, "find_spec"):
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                        spec.loader = Measured(spec.loader)
                    return spec
        return None
sys.meta_path.insert(0, Finder())
base = rss()
if "polter.gateway.sdk_imports" in sys.argv:  # the gateway imports the SDK lazily, first thing
    from polter.gateway.sdk_imports import import_sdk_lazily
    import_sdk_lazily()
for name in sys.argv[1:]:
    try: importlib.import_module(name)
    except BaseException: pass
packages = collections.Counter()
for name, kib in own.items():
    packages[name.split(".")[0]] += kib
print(json.dumps({"bare_kib": base, "total_kib": rss(), "packages": packages}))
"""
"""Imports the modules named in its arguments, in order, and prints the RSS (KiB) each top-level package's
own modules added while they ran (a module's nested imports are counted where they run)."""


def memory_kib(pid: int) -> dict[str, int]:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:])
    kib = {key: int(value.split()[0]) for key, value in fields.items()}
    return {"rss": kib["Rss"], "pss": kib["Pss"], "uss": kib["Private_Clean"] + kib["Private_Dirty"]}


def in_mb(kib: dict[str, int]) -> dict[str, float]:
    return {key: round(value / 1024, 1) for key, value in kib.items()}


def export(reference: str, into: Path) -> Path:
    """The ``polter`` package (with its bundled roles and plugins) of commit ``reference``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", reference, "polter", "roles", "plugins"],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def compiled(tree: Path) -> None:
    """Both trees with their bytecode written, as a user's is after the first start (without it, every process
    compiles Polter's modules as it imports them, and the compiler's memory stays in its heap), whether or not
    this shell sets PYTHONDONTWRITEBYTECODE."""
    folders = [str(tree / name) for name in ("polter", "plugins")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *folders], check=True, stdout=subprocess.DEVNULL)


def write_config(folder: Path, go: Path) -> Path:
    """Four shell agent panes under ``coder``; each says it waits, and once ``go`` exists prints ``LINES``
    coloured lines, a last line that names it, and goes on as an interactive shell."""
    path = folder / "polter.toml"
    panes = []
    for number in range(1, PANES + 1):
        script = (
            f"echo waiting-{number}; while [ ! -e {go} ]; do sleep 0.05; done; "
            f"for i in $(seq 1 {LINES}); do printf '\\033[3%dm%05d\\033[0m the quick brown fox\\n' "
            f"$((i % 7 + 1)) $i; done; echo last-of-{number}; exec {BASH} --norc --noprofile"
        )
        command = [BASH, "--norc", "--noprofile", "-c", script]
        panes.append(
            f'[[panes]]\nadapter = "shell"\nrole = "coder"\ncommand = {json.dumps(command)}\n'
            f"cwd = {json.dumps(str(go.parent))}\n"
        )
    path.write_text("".join(panes))
    return path


def settled(pid: int, quiet: float = 2.0, timeout: float = 60.0) -> None:
    """Wait until the RSS of ``pid`` has not changed for ``quiet`` seconds (the host compacts quiet scrollback)."""
    deadline = time.monotonic() + timeout
    last, since = memory_kib(pid)["rss"], time.monotonic()
    while time.monotonic() - since < quiet and time.monotonic() < deadline:
        time.sleep(0.25)
        now = memory_kib(pid)["rss"]
        if abs(now - last) > 256:
            last, since = now, time.monotonic()


def modules_of(pids: dict[str, int], probe: Path) -> dict[str, list[str]]:
    """What each process has imported now (its ``sitecustomize`` writes ``sys.modules`` on SIGUSR2)."""
    for pid in pids.values():
        os.kill(pid, signal.SIGUSR2)
    deadline = time.monotonic() + 10
    files = {part: probe / f"{pid}.modules" for part, pid in pids.items()}
    while not all(path.exists() for path in files.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return {part: path.read_text().split() for part, path in files.items() if path.exists()}


async def showing(terminal: HostedTerminal, word: str) -> None:
    """Until every pane in the window shows ``word-N`` (N its number)."""
    words = [f"{word}-{number}" for number in range(1, PANES + 1)]
    await until(
        lambda: terminal.screen is not None and all(each in "\n".join(terminal.screen.display()) for each in words),
        timeout=300,
    )


def child_of(host: int, marker: str, what: str, timeout: float = 60.0) -> int:
    """The PID of the host's child whose command line holds ``marker``, once it runs."""
    deadline = time.monotonic() + timeout
    while not (found := [pid for pid in children(host) if marker in command_line(pid)]):
        if time.monotonic() > deadline:
            raise TimeoutError(f"the session's {what} did not start")
        time.sleep(0.05)
    return found[0]


def session(tree: Path, work: Path) -> dict[str, Any]:
    """One session run from ``tree``: its processes at start, then with full scrollbacks."""
    probe = work / "probe"
    probe.mkdir(parents=True)
    (work / "site").mkdir()
    (work / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = {"PYTHONPATH": os.pathsep.join([str(tree), str(work / "site")]), "POLTER_MEMORY_PROBE": str(probe)}
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)  # the host (and through it the gateway) inherits them
    try:
        with private_dirs() as folder:
            name = "memory"
            go = work_dir(folder) / "go"  # where the panes (each with a private /tmp) see it
            config = write_config(folder, go)
            start = f"import sys; from {daemon_module(tree)} import start_host; start_host(sys.argv[1], sys.argv[2:])"
            # run from ``work``: ``python -m``/``-c`` put the working directory first on sys.path
            subprocess.run(
                [sys.executable, "-c", start, name, "--config", str(config), "--session", name],
                check=True,
                timeout=120,
                cwd=work,
            )
            listing = subprocess.run(
                [sys.executable, "-m", "polter", "ls", "--json"],
                capture_output=True,
                text=True,
                check=True,
                timeout=60,
                cwd=work,
            )
            host = next(int(info["pid"]) for info in json.loads(listing.stdout) if info["name"] == name)
            try:
                pids = {
                    "host": host,
                    "gateway": child_of(host, "polter gateway", "gateway"),
                    "egress": child_of(host, "polter.sandbox.egress", "egress proxy"),
                }
                return asyncio.run(_attached(name, env, work, pids, go, probe))
            finally:
                subprocess.run(
                    [sys.executable, "-m", "polter", "kill", name],
                    capture_output=True,
                    timeout=60,
                    check=False,
                    cwd=work,
                )
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


async def _attached(
    name: str, env: dict[str, str], work: Path, session_pids: dict[str, int], go: Path, probe: Path
) -> dict[str, Any]:
    """The window attached: the four processes at start, then with full scrollbacks."""
    terminal = HostedTerminal(LaunchSpec(argv=(sys.executable, "-m", "polter", "attach", name), env=env, cwd=work))
    terminal.start(*SIZE)
    try:
        await showing(terminal, "waiting")
        assert terminal.process is not None
        pids = {"window": terminal.process.pid, **session_pids}
        for pid in pids.values():
            await asyncio.to_thread(settled, pid, 1.0)
        start = {part: memory_kib(pid) for part, pid in pids.items()}
        go.touch()
        await showing(terminal, "last-of")
        await asyncio.to_thread(settled, pids["host"])
        full = {part: memory_kib(pid) for part, pid in pids.items()}
        modules = await asyncio.to_thread(modules_of, pids, probe)
    finally:
        await terminal.close()
    return {"start": figures(start), "full": figures(full), "modules": modules}


def figures(kib: dict[str, dict[str, int]]) -> dict[str, dict[str, float]]:
    """Per process and in all, in MB."""
    result = {part: in_mb(values) for part, values in kib.items()}
    result["total"] = in_mb({key: sum(kib[part][key] for part in PROCESSES) for key in ("rss", "pss", "uss")})
    return result


def bare_python() -> dict[str, float]:
    """Reference: an interpreter that imported asyncio, waiting."""
    process = subprocess.Popen(
        [sys.executable, "-c", "import asyncio, sys; print('ready', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        return in_mb(memory_kib(process.pid))
    finally:
        process.kill()
        process.wait()


EMPTY_APP = """
from textual.app import App
from textual.widgets import Static

class Empty(App):
    def compose(self):
        yield Static("an empty app")

Empty().run()
"""


async def empty_textual_app() -> dict[str, float]:
    """Reference: an app with one line of text, in a terminal of the same size, once it is drawn."""
    terminal = HostedTerminal(LaunchSpec(argv=(sys.executable, "-c", EMPTY_APP)))
    terminal.start(*SIZE)
    try:
        await until(lambda: terminal.screen is not None and "an empty app" in "\n".join(terminal.screen.display()))
        assert terminal.process is not None
        await asyncio.to_thread(settled, terminal.process.pid, 1.0)
        return in_mb(memory_kib(terminal.process.pid))
    finally:
        await terminal.close()


def daemon_module(tree: Path) -> str:
    """Where ``tree`` keeps the host's start: a reference commit may be older than the folders by process."""
    return "polter.host.daemon" if (tree / "polter/host/daemon.py").exists() else "polter.session.daemon"


def import_costs(tree: Path, modules: list[str]) -> dict[str, Any]:
    """What ``modules`` (one process's, in the order it imported them) cost by package, re-imported in a
    fresh interpreter that measures each module's own RSS."""
    names = [
        name
        for name in modules
        if name != "__main__"
        and not name.endswith(".__main__")
        and name not in ("sitecustomize", daemon_module(tree))
    ]
    output = subprocess.run(
        [sys.executable, "-c", SELF_COST, *names],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(tree)},
        timeout=300,
        cwd=tree.parent,
    ).stdout
    figures = json.loads(output)
    return {
        "bare_mb": round(figures["bare_kib"] / 1024, 1),
        "total_mb": round(figures["total_kib"] / 1024, 1),
        "packages_mb": {
            package: round(kib / 1024, 1)
            for package, kib in sorted(figures["packages"].items(), key=lambda item: -item[1])
            if kib >= 100
        },
    }


def print_session(title: str, run: dict[str, Any]) -> None:
    print(f"{title} (MB):")
    for moment in MOMENTS:
        for part in (*PROCESSES, "total"):
            values = run[moment][part]
            print(
                f"  {moment:5} {part:8} RSS {values['rss']:6.1f}   PSS {values['pss']:6.1f}   USS {values['uss']:6.1f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", default="main", help="the commit to compare with (default: main)")
    parser.add_argument(
        "--imports",
        type=int,
        default=12,
        metavar="N",
        help="show the N costliest packages each process imported (0: skip that part)",
    )
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="polter-memory-") as directory:
        work = Path(directory)
        trees = {"this tree": ROOT, f"reference ({options.reference})": export(options.reference, work / "ref")}
        for tree in trees.values():
            compiled(tree)
        runs = {title: session(tree, work / f"run-{index}") for index, (title, tree) in enumerate(trees.items())}
        references = {"python_asyncio": bare_python(), "empty_textual_app": asyncio.run(empty_textual_app())}
        costs = {}
        if options.imports:
            modules = runs["this tree"]["modules"]
            costs = {part: import_costs(ROOT, modules[part]) for part in PROCESSES if part in modules}
    for title, run in runs.items():
        print_session(title, run)
    ours, theirs = runs["this tree"], runs[f"reference ({options.reference})"]
    print("this tree minus the reference (MB):")
    for moment in MOMENTS:
        for part in (*PROCESSES, "total"):
            change = {key: ours[moment][part][key] - theirs[moment][part][key] for key in ("rss", "pss", "uss")}
            rss, pss, uss = change["rss"], change["pss"], change["uss"]
            print(f"  {moment:5} {part:8} RSS {rss:+6.1f}   PSS {pss:+6.1f}   USS {uss:+6.1f}")
    bare, empty = references["python_asyncio"], references["empty_textual_app"]
    print(
        f"references: python -c 'import asyncio' RSS {bare['rss']} PSS {bare['pss']} USS {bare['uss']} MB; "
        f"an empty Textual app RSS {empty['rss']} PSS {empty['pss']} USS {empty['uss']} MB"
    )
    total = ours["full"]["total"]
    print(
        f"everything, this tree, full: PSS {total['pss']} MB = {total['pss'] / bare['pss']:.1f}x the bare "
        f"interpreter ({'meets' if total['pss'] < TARGET_MB else 'misses'} the target of {TARGET_MB:.0f}); RSS "
        f"{total['rss']} MB ({'meets' if total['rss'] < TARGET_MB else 'misses'} it); the window's PSS is "
        f"{ours['full']['window']['pss'] / empty['pss']:.2f}x the empty Textual app's; the gateway at start "
        f"(before any call): PSS {ours['start']['gateway']['pss']} MB, the reference's "
        f"{theirs['start']['gateway']['pss']} MB"
    )
    for part, cost in costs.items():
        top = list(cost["packages_mb"].items())[: options.imports]
        print(
            f"imports of the {part} ({len(runs['this tree']['modules'][part])} modules), re-imported: "
            f"{cost['total_mb']} MB RSS from a bare {cost['bare_mb']} MB; by package: "
            + ", ".join(f"{package} {mb}" for package, mb in top)
        )
    for run in runs.values():
        run["modules"] = {part: len(names) for part, names in run["modules"].items()}
    print(
        json.dumps(
            {
                "benchmark": "memory",
                "panes": PANES,
                "scrollback_lines_each": 10_000,
                **runs,
                "references": references,
                "import_costs": costs,
                "target_mb": TARGET_MB,
                "pss_meets_target": ours["full"]["total"]["pss"] < TARGET_MB,
                "rss_meets_target": ours["full"]["total"]["rss"] < TARGET_MB,
                "load_average": round(os.getloadavg()[0], 2),
                "cpus": os.cpu_count(),
            }
        )
    )


if __name__ == "__main__":
    main()
