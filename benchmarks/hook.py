"""How long `polter hook` takes per tool call, against baselines measured in the same run.

An AI CLI starts the hook before every MCP tool call and waits for it, so its start-up is paid on every
call. Timed here, each as the median of several runs of a fresh process answering one allowed call
(a stub gateway on 127.0.0.1 answers `/hook` at once, so the figure is Polter's own cost):

- ``python -c pass``: the interpreter's floor;
- ``import pydantic``: the floor once the wire models' library is needed;
- ``hook (module)``: ``python -m polter.cli.hook claude-code``, what adapters write into CLI configs;
- ``hook (polter CLI)``: ``polter hook claude-code`` through the whole command line.

Run: ``.venv/bin/python benchmarks/hook.py``. The last line is JSON.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ROUNDS = 15
PAYLOAD = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "mcp__time__get_current_time",
                      "tool_input": {"timezone": "UTC"}, "mcp_server": {"name": "time"}})


class Allow(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        body = b'{"decision": "allow"}'
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def median_ms(argv: list[str], env: dict[str, str], stdin: str = "") -> float:
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        result = subprocess.run(argv, input=stdin, capture_output=True, text=True, env=env)
        times.append((time.perf_counter() - start) * 1000)
        if result.returncode != 0:
            raise SystemExit(f"{argv} failed: {result.stderr}")
    return statistics.median(times)


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Allow)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {**os.environ, "POLTER_GATEWAY_URL": f"http://127.0.0.1:{server.server_address[1]}", "POLTER_TOKEN": "bench"}
    python = sys.executable
    figures = {
        "python -c pass": median_ms([python, "-c", "pass"], env),
        "import pydantic": median_ms([python, "-c", "import pydantic"], env),
        "hook (module)": median_ms([python, "-m", "polter.cli.hook", "claude-code"], env, PAYLOAD),
        "hook (polter CLI)": median_ms([python, "-m", "polter", "hook", "claude-code"], env, PAYLOAD),
    }
    server.shutdown()
    floor = figures["python -c pass"]
    for name, value in figures.items():
        print(f"{name:<20} {value:7.1f} ms   {value / floor:5.1f}× the interpreter's floor")
    print(json.dumps({"benchmark": "hook", "rounds": ROUNDS, "median_ms": {k: round(v, 1) for k, v in figures.items()},
                      "hook_over_pydantic_ms": round(figures["hook (module)"] - figures["import pydantic"], 1)}))


if __name__ == "__main__":
    main()
