"""A session host's process: ``python -m polter.cli._host_process --name NAME --ready-fd FD -- [polter's options]``.

Started by :func:`polter.host.daemon.start_host` in a new session (``setsid``), it forks once more so that
it can never acquire a terminal (a session leader that opens one would), logs to ``NAME.log`` in the state
dir, plans the launch from the options as ``polter`` would (:func:`polter.cli.app.plan`), and serves the
session until it ends. It tells the process that started it through the pipe ``FD`` when its socket accepts
windows (``ready``), or why it could not start. SIGTERM ends the session; SIGHUP and SIGINT are handled (not
ignored: the panes' programs must not inherit SIG_IGN) and do nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from typing import TextIO

from polter.cli import app_parser
from polter.cli.app import plan
from polter.errors import PolterError, SessionError
from polter.host.session_host import SessionHost
from polter.wire.registry import session_files

__all__ = ["main"]

logger = logging.getLogger(__name__)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m polter.cli._host_process")
    parser.add_argument("--name", required=True)
    parser.add_argument("--ready-fd", type=int, required=True)
    parser.add_argument("options", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    options = args.options[1:] if args.options[:1] == ["--"] else args.options
    if os.fork():
        os._exit(0)  # the host is no session leader: it can never acquire a controlling terminal
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s: %(message)s")
    ready = os.fdopen(args.ready_fd, "w")
    try:
        host = SessionHost(session_files(args.name), plan(app_parser().parse_args(options)))
    except PolterError as exc:
        ready.write(f"polter: {exc}")
        ready.close()
        return exc.exit_code
    return asyncio.run(serve(host, ready))


async def serve(host: SessionHost, ready: TextIO) -> int:
    """Open the session's socket, say ``ready`` (or why not), then serve until the session ends."""
    try:
        await host.start()
    except (SessionError, OSError) as exc:
        ready.write(f"polter: {exc}")
        ready.close()
        return 1
    ready.write("ready")
    ready.close()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, lambda: asyncio.ensure_future(host.end("the session host was terminated")))
    for ignored in (signal.SIGHUP, signal.SIGINT):  # handled, not ignored: the panes' programs must not inherit SIG_IGN
        loop.add_signal_handler(ignored, lambda: None)
    await host.run()
    logger.info("session %s ended: %s", host.name, host.end_reason)
    return 0


if __name__ == "__main__":
    sys.exit(main())
