"""``gateway.json``: how admin tools find a running gateway (url, pid, admin token). Mode 0600.

Kept light (pydantic only) so ``polter panes``/``asks`` start fast.
"""

from __future__ import annotations

import os
from pathlib import Path

from polter.errors import ConfigError, GatewayUnavailable
from polter.gateway.models import GatewayState

__all__ = ["STATE_FILE", "read_state", "write_state"]

STATE_FILE = "gateway.json"


def write_state(state_dir: Path, state: GatewayState) -> Path:
    """Write ``gateway.json`` with mode 0600 from the first byte (it holds the admin token)."""
    state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = state_dir / STATE_FILE
    temporary = path.with_suffix(".tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(state.model_dump_json(indent=2))
    os.chmod(temporary, 0o600)
    os.replace(temporary, path)
    return path


def read_state(state_dir: Path) -> GatewayState:
    path = state_dir / STATE_FILE
    try:
        return GatewayState.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GatewayUnavailable(
            f"no gateway is running for {state_dir} ({path} does not exist); start one with `polter gateway`"
        ) from None
    except ValueError as exc:
        raise ConfigError(f"not a gateway state file: {exc}", path=path) from exc
