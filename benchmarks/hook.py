"""How long a veto hook's decision takes per tool call, against baselines measured in the same run.

An AI CLI runs its veto hook before every tool call (every Read and Grep too) and waits for it. Timed here
against the real gateway (``polter gateway`` as a subprocess, a pane under the bundled ``researcher``), each
call a real decision on a Bash command (``ls -la | wc -l``: parsed, matched, audited):

- ``python -c pass``: the interpreter's floor, the reference for a command hook;
- ``hook client``: ``python -I -S hook_client.pyc claude-code PROJECT`` (the compiled forwarder), what adapters
  write into the configs of CLIs with command hooks (Codex, Gemini CLI, Qwen Code): its whole round trip,
  process start included; ``hook client .py`` the same from its source (compiled at every run);
- ``polter hook``: the same through the whole ``polter`` command line (for people typing it);
- ``HTTP hook``: what Claude Code does (no process): one POST of the payload to ``/hook/claude-code/payload`` on a
  fresh connection, its p50 and p95 over many calls.

Targets (issue 26): the command hook at most 1.3x ``python -c pass``; the HTTP hook under 5 ms p50.
Run: ``.venv/bin/python benchmarks/hook.py``. The last line is JSON.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote, urlsplit

from polter.adapters._veto import hook_client_program

ROUNDS = 40
HTTP_ROUNDS = 300
ROOT = Path(__file__).resolve().parent.parent
HOOK_CLIENT = ROOT / "polter" / "hook_client.py"
HOOK_PROGRAM = hook_client_program()


def run_ms(argv: list[str], env: dict[str, str], stdin: str) -> float:
    start = time.perf_counter()
    result = subprocess.run(argv, input=stdin, capture_output=True, text=True, env=env)
    elapsed = (time.perf_counter() - start) * 1000
    if result.returncode != 0:
        raise SystemExit(f"{argv} failed ({result.returncode}): {result.stderr}")
    return elapsed


def medians_ms(commands: dict[str, tuple[list[str], str]], env: dict[str, str]) -> dict[str, float]:
    """Each command's median over :data:`ROUNDS` rounds; every round runs each command once, in an order that
    turns round by round, so a change in the machine's load hits all of them alike (these machines are noisy,
    and a block of one command's runs would take the whole of a slow spell)."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    names = list(commands)
    for round_number in range(ROUNDS):
        turn = round_number % len(names)
        for name in names[turn:] + names[:turn]:
            argv, stdin = commands[name]
            times[name].append(run_ms(argv, env, stdin))
    return {name: statistics.median(values) for name, values in times.items()}


def http_ms(url: str, token: str, path: str, body: bytes) -> tuple[float, float]:
    parts = urlsplit(url)
    times = []
    for _ in range(HTTP_ROUNDS):
        start = time.perf_counter()
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
        connection.request("POST", path, body, {"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        response = connection.getresponse()
        answer = response.read()
        connection.close()
        times.append((time.perf_counter() - start) * 1000)
        if response.status != 200 or b"deny" in answer:
            raise SystemExit(f"the HTTP hook answered {response.status}: {answer[:300]!r}")
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95)]


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="polter-hook-bench-"))
    project = work / "project"
    project.mkdir()
    state = work / "state"
    (work / "none.toml").write_text("[servers]\n")
    polter = [sys.executable, "-m", "polter"]
    gateway = subprocess.Popen(
        [*polter, "gateway", "--state-dir", str(state), "--servers", str(work / "none.toml")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "POLTER_CONFIG_DIR": str(work / "config")},
    )
    try:
        assert gateway.stdout is not None
        line = gateway.stdout.readline()
        if "listening on" not in line:
            raise SystemExit(f"the gateway did not start: {line!r}")
        url = line.rsplit(" ", 1)[1].strip()
        created = json.loads(
            subprocess.run(
                [*polter, "panes", "register", "--role", "researcher", "--json", "--state-dir", str(state)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        token = created["token"]
        payload = json.dumps(
            {
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "cwd": str(project),
                "tool_input": {"command": "ls -la | wc -l"},
            }
        )
        env = {**os.environ, "POLTER_GATEWAY_URL": url, "POLTER_TOKEN": token}
        python = sys.executable
        figures = medians_ms(
            {
                "python -c pass": ([python, "-c", "pass"], ""),
                "hook client": ([python, "-I", "-S", str(HOOK_PROGRAM), "claude-code", str(project)], payload),
                "hook client .py": ([python, "-I", "-S", str(HOOK_CLIENT), "claude-code", str(project)], payload),
                "polter hook": ([*polter, "hook", "claude-code", str(project)], payload),
            },
            env,
        )
        path = f"/hook/claude-code/payload?project={quote(str(project))}"
        p50, p95 = http_ms(url, token, path, payload.encode())
    finally:
        gateway.terminate()
        gateway.wait(timeout=20)
        shutil.rmtree(work, ignore_errors=True)
    floor = figures["python -c pass"]
    for name, value in figures.items():
        print(f"{name:<16} {value:7.1f} ms   {value / floor:5.2f}x python -c pass")
    print(f"{'HTTP hook':<16} {p50:7.2f} ms p50, {p95:.2f} ms p95 (no process; target < 5 ms p50)")
    print(
        json.dumps(
            {
                "benchmark": "hook",
                "rounds": ROUNDS,
                "median_ms": {k: round(v, 1) for k, v in figures.items()},
                "client_over_python": round(figures["hook client"] / floor, 2),
                "http_p50_ms": round(p50, 2),
                "http_p95_ms": round(p95, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
