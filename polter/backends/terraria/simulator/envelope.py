"""The REST envelope TShock wraps every answer in, and what a route handler is given.

``RestObject`` is a dictionary whose ``"status"`` is a string (``"200"``, ``"400"`` …) that also
becomes the HTTP status; data keys sit beside it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from polter.backends.terraria.simulator.world import Token, World

__all__ = ["Body", "Call", "Endpoint", "error", "invalid", "missing", "ok", "parse_bool"]

Body = dict[str, Any]

NOT_FOUND = "Specified API endpoint doesn't exist. Refer to the documentation for a list of valid endpoints."
NO_TOKEN = "Not authorized. The specified API endpoint requires a token."
BAD_TOKEN = "Not authorized. The specified API endpoint requires a token, but the provided token was not valid."
GROUP_GONE = "Not authorized. The provided token became invalid due to group changes, please create a new token."
BAD_LOGIN = "Username or password may be incorrect or this account may not have sufficient privileges."


def ok(response: Any = None, **fields: Any) -> Body:
    body: Body = {"status": "200"}
    if response is not None:
        body["response"] = response
    body.update(fields)
    return body


def error(status: int, message: str) -> Body:
    return {"status": str(status), "error": message}


def missing(*names: str) -> Body:
    return error(400, f"Missing or empty {', '.join(names)} parameter")


def invalid(name: str) -> Body:
    return error(400, f"Missing or invalid {name} parameter")


def parse_bool(value: str | None) -> bool | None:
    """.NET ``bool.TryParse``: ``true``/``false`` in any case, anything else fails."""
    if value is None:
        return None
    return {"true": True, "false": False}.get(value.strip().lower())


@dataclass
class Call:
    world: World
    params: dict[str, str]
    verbs: dict[str, str]
    token: Token | None
    ip: str

    def param(self, name: str) -> str | None:
        value = self.params.get(name)
        return value if value else None


@dataclass(frozen=True)
class Endpoint:
    path: str
    handler: Callable[[Call], Body]
    permissions: tuple[str, ...] = ()
    token: bool = True
    status_route: bool = False
    """Needs a token only when ``EnableTokenEndpointAuthentication`` is on."""

    @property
    def pattern(self) -> re.Pattern[str] | None:
        if "{" not in self.path:
            return None
        return re.compile("^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]*)", self.path) + "$")
