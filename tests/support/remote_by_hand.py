"""The tests' ssh set-up, brought up by hand: try ``polter attach HOST`` as a user would, with no machine of your own.

    .venv/bin/python tests/support/remote_by_hand.py /tmp/far      # runs until Ctrl-C
    . /tmp/far/env.sh                                                # in the shell you try it from
    polter --host far                                                # or: polter attach far:NAME, polter ls far

An sshd on a loopback port (:mod:`support.sshd`) whose login ``far`` has Polter folders of its own under the folder
given (another machine's sessions, config and home), and an ``ssh`` that reaches it (the folder's ``client/ssh``,
first on ``PATH`` in ``env.sh``). Its ``polter.toml`` opens two bash panes. Ctrl-C ends the sshd (a link down, for
a window attached); the sessions started on ``far`` run on (``polter kill far:NAME`` ends one). Started again, it
listens on another port with new keys, and the same ``ssh`` finds it: a window that was reconnecting attaches.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.sshd import SshHost, login_env, ssh_client  # noqa: E402

HOST = "far"
PANES = '[[panes]]\nadapter = "shell"\ncommand = ["bash", "--norc", "--noprofile"]\n' * 2


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/polter-far").resolve()
    env = login_env(folder / "far-dirs")
    os.rmdir(env["POLTER_RUNTIME_DIR"])  # (one per process: the next start must find the sessions of this one)
    env["POLTER_RUNTIME_DIR"] = str(folder / "far-run")
    Path(env["POLTER_RUNTIME_DIR"]).mkdir(mode=0o700, exist_ok=True)
    config = Path(env["POLTER_CONFIG_DIR"], "polter.toml")
    if not config.exists():
        config.write_text(PANES)
    shutil.rmtree(folder / "sshd", ignore_errors=True)  # fresh keys at each start (a port of its own too)
    sshd = SshHost(folder / "sshd", {HOST: env})
    sshd.start()
    client = ssh_client(folder / "client", [sshd])
    here = folder / "here"
    for name in ("config", "state"):
        (here / name).mkdir(parents=True, exist_ok=True)
    exports = {
        "PATH": f"{client}:{Path(sys.executable).parent}:{os.environ['PATH']}",
        "POLTER_CONFIG_DIR": str(here / "config"),
        "POLTER_STATE_DIR": str(here / "state"),
    }
    (folder / "env.sh").write_text("".join(f"export {name}={shlex.quote(value)}\n" for name, value in exports.items()))
    print(f"sshd for {HOST} on 127.0.0.1:{sshd.port} (log {sshd.log}); in your shell: . {folder / 'env.sh'}", flush=True)
    try:
        signal.sigwait({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
    finally:
        sshd.stop()


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
    main()
