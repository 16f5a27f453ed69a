"""The session host's table of calls: one handler per method of :mod:`polter.wire.methods`, registered
once with its params model, and the one place a call becomes a reply.

A handler takes the window that called and its validated params, and returns the method's result. What it
refuses (a :class:`~polter.errors.PolterError`: no such pane, a role the gateway does not know) goes back as
the reply's error, in the handler's words; so do params that are not the method's. Anything else a handler
raises is a bug of the host's: it is logged with its traceback and the window gets a generic failure,
never a reply that looks like a refusal.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

from pydantic import ValidationError

from polter.errors import PolterError
from polter.host.windows import Window
from polter.wire import messages as wire
from polter.wire.methods import METHODS, CallParams

__all__ = ["HOST_FAILURE", "CallTable"]

logger = logging.getLogger(__name__)

ParamsT = TypeVar("ParamsT", bound=CallParams[Any])
Handler = Callable[[Window, ParamsT], Awaitable[Any]]

HOST_FAILURE: Final = "the session host failed to answer {method} (an error of its own, written to its log)"
"""The reply's error when a handler fails with something that is no refusal."""


class CallTable:
    """Handlers by method name, each with its params model."""

    def __init__(self) -> None:
        self._handlers: dict[str, tuple[type[CallParams[Any]], Handler[Any]]] = {}

    def register(self, params: type[ParamsT], handler: Handler[ParamsT]) -> None:
        """Serve ``params.method`` with ``handler`` (once: a second handler for a method is a bug)."""
        if METHODS.get(params.method) is not params:
            raise ValueError(f"{params.__name__} is not a method of polter.wire.methods")
        if params.method in self._handlers:
            raise ValueError(f"the method {params.method!r} has a handler already")
        self._handlers[params.method] = (params, handler)

    @property
    def methods(self) -> list[str]:
        return sorted(self._handlers)

    async def answer(self, window: Window, call: wire.Call) -> wire.Reply:
        """The reply to ``call`` from ``window``."""
        entry = self._handlers.get(call.method)
        if entry is None:
            return wire.Reply(id=call.id, error=f"no method {call.method!r} in this session's protocol")
        model, handler = entry
        try:
            params = model.model_validate(call.params)
        except ValidationError as exc:
            return wire.Reply(id=call.id, error=f"{call.method}: {_first_problem(exc)}")
        try:
            result = await handler(window, params)
            return wire.Reply(id=call.id, result=model.result.dump_python(result, mode="json", warnings="error"))
        except PolterError as exc:
            return wire.Reply(id=call.id, error=str(exc))
        except Exception:
            logger.exception("the call %s (%s) failed", call.method, params)
            return wire.Reply(id=call.id, error=HOST_FAILURE.format(method=call.method))


def _first_problem(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
    return f"{where}: {first['msg']}{more}" if where else f"{first['msg']}{more}"
