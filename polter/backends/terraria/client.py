"""An async client for TShock's REST API that turns every refusal into a clear :class:`TShockError`.

Configured from the environment (``TSHOCK_URL`` plus ``TSHOCK_TOKEN`` or ``TSHOCK_USERNAME`` /
``TSHOCK_PASSWORD``). With a username it logs in once, caches the token in memory, logs in again
only when TShock forgets it (a restart), and never hammers ``/v2/token/create``: TShock lets about
three logins a minute through per IP and answers the rest with the same 403 as a wrong password.
Credentials stay here: messages never carry them, and :meth:`TShockClient.redact` scrubs any text.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import httpx
import platformdirs
from pydantic import BaseModel, ConfigDict, SecretStr, ValidationError, field_validator

from polter.backends.terraria.text import strip_colour_tags
from polter.errors import ConfigError, TShockError

__all__ = ["TShockClient", "TShockSettings"]

ENV_URL, ENV_TOKEN, ENV_USERNAME, ENV_PASSWORD = "TSHOCK_URL", "TSHOCK_TOKEN", "TSHOCK_USERNAME", "TSHOCK_PASSWORD"
ENV_TOKEN_CACHE = "TSHOCK_TOKEN_CACHE"
"""A file for the token a login created (``off`` disables); by default under Polter's state dir."""

LOGINS_PER_WINDOW = 2
"""Each login costs two of TShock's five requests a minute; two leave room for a human's own login."""
LOGIN_WINDOW_SECONDS = 60.0

_TOKEN_LOST = ("provided token was not valid", "token became invalid")
_GENERIC_FAILURES = {
    "Invalid command entered. Type /help for a list of valid commands.": "TShock does not know this command",
    "You do not have access to this command.": "the REST account's group lacks the permission for this command",
    "You must use this command in-game.": "TShock runs this command only for a player in the game, never over REST "
    "(vanilla TShock cannot do this remotely; a plugin can, see docs/terraria.md)",
    "Command failed, check logs for more details.": "the command crashed inside TShock (see the server log)",
}


class TShockSettings(BaseModel):
    """Where TShock is and how to authenticate; secrets are :class:`SecretStr` so they never print."""

    model_config = ConfigDict(frozen=True)

    url: str
    token: SecretStr | None = None
    username: str | None = None
    password: SecretStr | None = None
    timeout: float = 15.0
    token_cache: Path | None = None
    """Where a login's token is kept between runs (0600), so restarts do not spend TShock's login budget."""

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not re.match(r"^https?://[^/\s]+", value):
            raise ValueError("must be an http(s) URL such as http://127.0.0.1:7878")
        return value.rstrip("/")

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> TShockSettings:
        url = env.get(ENV_URL, "").strip()
        if not url:
            raise ConfigError("is not set; point it at TShock's REST API, e.g. http://127.0.0.1:7878", field=ENV_URL)
        token = env.get(ENV_TOKEN, "").strip() or None
        username = env.get(ENV_USERNAME, "").strip() or None
        password = env.get(ENV_PASSWORD) or None
        if token is None and not (username and password):
            raise ConfigError(f"set {ENV_TOKEN}, or both {ENV_USERNAME} and {ENV_PASSWORD}", field=ENV_TOKEN)
        try:
            settings = cls(
                url=url,
                token=None if token is None else SecretStr(token),
                username=username,
                password=None if password is None else SecretStr(password),
            )
        except ValidationError as exc:
            raise ConfigError(exc.errors()[0]["msg"], field=ENV_URL) from None
        if token is not None:
            return settings
        cache = env.get(ENV_TOKEN_CACHE, "").strip()
        if cache.lower() == "off":
            return settings
        if not cache:
            state = env.get("POLTER_STATE_DIR") or str(platformdirs.user_state_path("polter"))
            key = hashlib.sha256(f"{settings.url}\n{username}".encode()).hexdigest()[:16]
            cache = str(Path(state) / "terraria" / f"token-{key}")
        return settings.model_copy(update={"token_cache": Path(cache).expanduser()})


class TShockClient:
    """One TShock server. Safe to share between concurrent tool calls."""

    def __init__(
        self,
        settings: TShockSettings,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self._http = httpx.AsyncClient(
            base_url=settings.url,
            timeout=settings.timeout,
            transport=transport,
            headers={"User-Agent": "polter-terraria/0.1"},
        )
        self._clock = clock
        self._token: str | None = settings.token.get_secret_value() if settings.token else self._cached_token()
        self._login_lock = asyncio.Lock()
        self._logins: list[float] = []
        self._login_refused_until = 0.0

    async def aclose(self) -> None:
        await self._http.aclose()

    # secrets ------------------------------------------------------------------------------------

    def secrets(self) -> list[str]:
        found = [self._token] if self._token else []
        for secret in (self.settings.token, self.settings.password):
            if secret is not None:
                found.append(secret.get_secret_value())
        return [s for s in found if len(s) >= 4]  # TShock's own minimum; shorter would mangle every reply

    def redact(self, text: str) -> str:
        for secret in sorted(set(self.secrets()), key=len, reverse=True):
            text = text.replace(secret, "[redacted]")
        return text

    # requests -----------------------------------------------------------------------------------

    async def get(self, path: str, **params: Any) -> dict[str, Any]:
        """Call a route with the token (TShock ignores it where none is needed); on success the JSON
        body, else a :class:`TShockError` saying why."""
        token = await self._current_token()
        body = await self._send(path, {**params, "token": token})
        if body["status"] == "403" and any(text in str(body.get("error")) for text in _TOKEN_LOST):
            if self.settings.username is None:
                raise TShockError(
                    f"TShock rejected TSHOCK_TOKEN ({body['error']}). Create a new token or set "
                    f"{ENV_USERNAME}/{ENV_PASSWORD} so it can log in by itself.",
                    status=403,
                )
            if self._token == token:  # TShock forgot it (restart, group change): log in again, once
                self._token = None
                self._store_token(None)
            token = await self._current_token()
            body = await self._send(path, {**params, "token": token})
        return self._checked(path, body)

    async def rawcmd(self, command: str) -> list[str]:
        """Run a chat command as the REST user; its reply lines, colour tags stripped.

        TShock drops the first character of ``cmd``, so a command must start with ``/`` or ``.``
        (silent: the confirmation comes back instead of being announced to everyone).
        """
        if not command or command[0] not in "/.":
            raise ValueError(f"a TShock command starts with / or . (got {command!r})")
        body = await self.get("/v3/server/rawcmd", cmd=command)
        lines = [strip_colour_tags(line) for line in body.get("response", [])]
        for line in lines:
            if line in _GENERIC_FAILURES:
                name = command[1:].split(" ", 1)[0]
                raise TShockError(f"{command[0]}{name}: {_GENERIC_FAILURES[line]}. TShock said: {line!r}")
        return lines

    async def command(self, command: str, *, expect: str | None = None, silent_ok: bool = False) -> list[str]:
        """:meth:`rawcmd`, then insist on TShock's confirmation: a line matching ``expect`` (a regex),
        or, where ``silent_ok``, no lines at all (the command only announced to every player). Any
        other reply is TShock saying no, and becomes an error carrying its words."""
        lines = await self.rawcmd(command)
        if not lines and silent_ok:
            return lines
        if expect is None and not silent_ok:
            return lines
        if expect is not None and any(re.search(expect, line) for line in lines):
            return lines
        said = " / ".join(lines) if lines else "nothing"
        raise TShockError(f"TShock did not do it. It answered: {said}")

    # internals ----------------------------------------------------------------------------------

    def _cached_token(self) -> str | None:
        path = self.settings.token_cache
        if path is None or not path.is_file():
            return None
        token = path.read_text(encoding="ascii", errors="replace").strip()
        return token if re.fullmatch(r"[0-9A-Fa-f]{16,128}", token) else None

    def _store_token(self, token: str | None) -> None:
        """Keep (or forget) the login's token on disk, readable by this user only."""
        path = self.settings.token_cache
        if path is None:
            return
        if token is None:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            return
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = path.with_name(path.name + ".tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="ascii") as handle:
            handle.write(token)
        os.replace(temporary, path)

    async def _send(self, path: str, params: dict[str, Any]) -> dict[str, Any]:
        query = {k: _wire(v) for k, v in params.items() if v is not None}
        try:
            reply = await self._http.get(path, params=query)
        except httpx.TimeoutException:
            raise TShockError(
                f"TShock at {self.settings.url} did not answer {path} within {self.settings.timeout:g} s"
            ) from None
        except httpx.HTTPError as exc:
            raise TShockError(
                f"cannot reach TShock at {self.settings.url} ({type(exc).__name__}: "
                f"{self.redact(str(exc)) or 'no reply'}). Is the server running with "
                "RestApiEnabled set to true?"
            ) from None
        try:
            body = reply.json()
        except ValueError:
            raise TShockError(
                f"{self.settings.url}{path} did not answer with TShock's JSON (HTTP "
                f"{reply.status_code}); is TSHOCK_URL the REST port (7878 by default)?"
            ) from None
        if not isinstance(body, dict) or "status" not in body:
            raise TShockError(f"{path}: an answer without TShock's status field", status=reply.status_code)
        body["status"] = str(body["status"])
        return body

    def _checked(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        status = body["status"]
        if status == "200":
            return body
        message = self.redact(str(body.get("error") or body.get("response") or "no message"))
        code = int(status) if status.isdigit() else None
        if status == "404":
            raise TShockError(f"{path} does not exist on this TShock (another version?): {message}", status=404)
        if status == "403":
            raise TShockError(
                f"{path}: {message} Give the REST account's group the tshock.rest.* permission "
                "this endpoint needs (docs/terraria.md lists them).",
                status=403,
            )
        if status == "500":
            detail = self.redact(str(body.get("errormsg") or ""))
            raise TShockError(f"{path}: TShock failed: {message}{' ' + detail if detail else ''}", status=500)
        raise TShockError(f"{path}: {message}", status=code)

    async def _current_token(self) -> str:
        if self._token is not None:
            return self._token
        async with self._login_lock:
            if self._token is None:
                self._token = await self._login()
            return self._token

    async def _login(self) -> str:
        username, password = self.settings.username, self.settings.password
        if username is None or password is None:
            raise TShockError(f"no TShock credentials: set {ENV_TOKEN}, or {ENV_USERNAME} and {ENV_PASSWORD}")
        now = self._clock()
        if now < self._login_refused_until:
            raise TShockError(
                f"TShock refused the last login as '{username}'; not trying again for "
                f"{self._login_refused_until - now:.0f} s, to stay under its login rate limit"
            )
        self._logins = [t for t in self._logins if now - t < LOGIN_WINDOW_SECONDS]
        if len(self._logins) >= LOGINS_PER_WINDOW:
            wait = LOGIN_WINDOW_SECONDS - (now - self._logins[0])
            raise TShockError(
                f"already logged in to TShock {len(self._logins)} times this minute; waiting "
                f"{wait:.0f} s before the next login, to stay under its rate limit"
            )
        self._logins.append(now)
        body = await self._send("/v2/token/create", {"username": username, "password": password.get_secret_value()})
        if body["status"] == "200" and body.get("token"):
            self._store_token(str(body["token"]))
            return str(body["token"])
        self._login_refused_until = now + LOGIN_WINDOW_SECONDS
        raise TShockError(
            f"TShock refused the login as '{username}': a wrong username or password, an account "
            "whose group lacks tshock.rest.useapi, or TShock's login rate limit (5 requests a "
            "minute per IP). Not retrying for a minute.",
            status=int(body["status"]) if body["status"].isdigit() else None,
        )


def _wire(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
