"""``notify_command``: a program of the user's that the session host runs when a pane needs the human.

It gets the pane's number, title, role, the event and a one-line excerpt as arguments and in ``POLTER_*``
variables, runs in the background with the host's environment, and is killed after
:data:`NOTIFY_COMMAND_TIMEOUT`; its output goes to the host's log, a failure is logged, never fatal.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
from typing import Final

from polter.wire import messages as wire

__all__ = ["NOTIFY_COMMAND_TIMEOUT", "notify_command_env", "run_notify_command"]

logger = logging.getLogger(__name__)

NOTIFY_COMMAND_TIMEOUT: Final = 60.0
"""Seconds a ``notify_command`` may run before it is killed (a hung webhook must not pile up processes)."""


def notify_command_env(notice: wire.AttentionNotice, *, session: str, adapter: str) -> dict[str, str]:
    """What ``notify_command`` finds in its environment besides its arguments."""
    return {
        "POLTER_SESSION": session,
        "POLTER_PANE": str(notice.number),
        "POLTER_PANE_ID": notice.pane,
        "POLTER_PANE_TITLE": notice.title,
        "POLTER_ROLE": notice.role,
        "POLTER_ADAPTER": adapter,
        "POLTER_EVENT": notice.event,
        "POLTER_EXCERPT": notice.message,
    }


async def run_notify_command(
    command: list[str], notice: wire.AttentionNotice, env: dict[str, str], *, timeout: float = NOTIFY_COMMAND_TIMEOUT
) -> int | None:
    """Run ``command`` with the pane's number, title, role, the event and the excerpt as arguments (and ``env``);
    its output goes to the log. Returns its exit code, None when it could not start or was killed for taking
    longer than ``timeout``."""
    argv = [*command, str(notice.number), notice.title, notice.role, notice.event, notice.message]
    shown = shlex.join(command)
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env={**os.environ, **env},
            start_new_session=True,
        )
    except OSError as exc:
        logger.warning("notify_command %s could not start: %s", shown, exc)
        return None
    try:
        output, _ = await asyncio.wait_for(process.communicate(), timeout)
    except TimeoutError:
        process.kill()
        await process.wait()
        logger.warning("notify_command %s took longer than %.0f s and was killed", shown, timeout)
        return None
    except asyncio.CancelledError:  # the session ends: no command outlives it
        process.kill()
        raise
    for line in output.decode("utf-8", "replace").splitlines():
        logger.info("notify_command: %s", line)
    if process.returncode != 0:
        logger.warning("notify_command %s exited with %s (pane %s, %s)", shown, process.returncode, notice.number,
                       notice.event)  # fmt: skip
    else:
        logger.info("notify_command %s ran for pane %s (%s)", shown, notice.number, notice.event)
    return process.returncode
