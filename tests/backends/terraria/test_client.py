"""The TShock client and server edges: configuration, token creation and caching under TShock's login
rate limit, TShock's refusals as clear tool errors, and credentials that never leave the backend."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from backends.terraria.helpers import call, closed_port, fail, text_of
from mcp import Client
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route

from polter.backends.terraria.client import TShockClient, TShockSettings
from polter.backends.terraria.localhttp import LocalHttpServer
from polter.backends.terraria.server import Backend, build_server
from polter.backends.terraria.simulator import SimulatorServer, World
from polter.backends.terraria.wiki import WikiClient
from polter.errors import ConfigError, TShockError


def login_backend(sim: SimulatorServer, username: str, password: str, **clock: object) -> Backend:
    settings = TShockSettings(url=sim.url, username=username, password=password)
    return Backend(TShockClient(settings, **clock), WikiClient(min_interval=0))  # type: ignore[arg-type]


def test_settings_from_the_environment_name_what_is_missing(isolated_dirs: dict[str, Path]) -> None:
    with pytest.raises(ConfigError, match="^TSHOCK_URL: is not set"):
        TShockSettings.from_env({})
    with pytest.raises(ConfigError, match="^TSHOCK_TOKEN: set TSHOCK_TOKEN, or both TSHOCK_USERNAME"):
        TShockSettings.from_env({"TSHOCK_URL": "http://127.0.0.1:7878", "TSHOCK_USERNAME": "admin"})
    with pytest.raises(ConfigError, match="^TSHOCK_URL: .*http"):
        TShockSettings.from_env({"TSHOCK_URL": "127.0.0.1:7878", "TSHOCK_TOKEN": "x"})
    settings = TShockSettings.from_env({"TSHOCK_URL": "http://127.0.0.1:7878/", "TSHOCK_USERNAME": "admin",
                                        "TSHOCK_PASSWORD": "hunter22", "POLTER_STATE_DIR": str(isolated_dirs["state"])})
    assert settings.url == "http://127.0.0.1:7878" and "hunter22" not in repr(settings)
    assert settings.token_cache is not None and settings.token_cache.parent == isolated_dirs["state"] / "terraria"


def test_token_cache_location(tmp_path: Path) -> None:
    base = {"TSHOCK_URL": "http://127.0.0.1:7878", "TSHOCK_USERNAME": "admin", "TSHOCK_PASSWORD": "hunter22"}
    assert TShockSettings.from_env({**base, "TSHOCK_TOKEN_CACHE": "off"}).token_cache is None
    chosen = TShockSettings.from_env({**base, "TSHOCK_TOKEN_CACHE": str(tmp_path / "t")}).token_cache
    assert chosen == tmp_path / "t"
    assert TShockSettings.from_env({"TSHOCK_URL": "http://x:1", "TSHOCK_TOKEN": "abcd"}).token_cache is None
    other = TShockSettings.from_env({**base, "TSHOCK_USERNAME": "bob", "POLTER_STATE_DIR": str(tmp_path)})
    assert other.token_cache is not None and other.token_cache.parent == tmp_path / "terraria"


async def test_a_logins_token_survives_a_restart_in_a_0600_file(sim: SimulatorServer, world: World,
                                                                tmp_path: Path) -> None:
    env = {"TSHOCK_URL": sim.url, "TSHOCK_USERNAME": "admin", "TSHOCK_PASSWORD": world.passwords["admin"],
           "TSHOCK_TOKEN_CACHE": str(tmp_path / "cache" / "token")}
    for _ in range(3):  # three runs of the server (the gateway restarting it, say)
        tshock = TShockClient(TShockSettings.from_env(env))
        assert (await tshock.get("/world/read"))["name"] == "Polterheim"
        await tshock.aclose()
    cache = tmp_path / "cache" / "token"
    assert world.rate_buckets["127.0.0.1"] == 2  # one login in all
    assert cache.stat().st_mode & 0o777 == 0o600 and cache.read_text() in world.tokens
    world.tokens.pop(cache.read_text())  # TShock restarted
    tshock = TShockClient(TShockSettings.from_env(env))
    await tshock.get("/world/read")
    await tshock.aclose()
    assert world.rate_buckets["127.0.0.1"] == 4 and cache.read_text() in world.tokens


async def test_logs_in_once_caches_the_token_and_logs_in_again_when_tshock_forgets_it(
        sim: SimulatorServer, world: World) -> None:
    backend = login_backend(sim, "admin", world.passwords["admin"])
    async with Client(build_server(backend), cache=None) as client:
        await call(client, "world_bloodmoon", enabled=True)
        await call(client, "server_status")
        await call(client, "player_list")
        created = [t for t, data in world.tokens.items() if data.username == "admin"]
        assert len(created) == 1 and world.rate_buckets["127.0.0.1"] == 2  # one login costs two
        world.tokens.pop(created[0])  # TShock restarted: in-memory tokens are gone
        await call(client, "world_bloodmoon", enabled=False)
        assert len([t for t, data in world.tokens.items() if data.username == "admin"]) == 1
        assert not world.bloodmoon and world.rate_buckets["127.0.0.1"] == 4
    await backend.aclose()


async def test_a_refused_login_is_not_retried_and_the_rate_limit_is_respected(
        sim: SimulatorServer, world: World) -> None:
    backend = login_backend(sim, "admin", "wrong-password")
    async with Client(build_server(backend), cache=None) as client:
        first = await fail(client, "server_status")
        assert "refused the login as 'admin'" in first and "rate limit" in first
        second = await fail(client, "world_info")
        assert "not trying again" in second
    assert world.rate_buckets["127.0.0.1"] == 2  # the second call never reached TShock
    await backend.aclose()


async def test_the_client_spaces_its_own_logins(sim: SimulatorServer, world: World) -> None:
    now = [0.0]
    backend = login_backend(sim, "admin", world.passwords["admin"], clock=lambda: now[0])
    tshock = backend.tshock
    for _ in range(2):
        await tshock.get("/world/read")
        world.tokens = {k: v for k, v in world.tokens.items() if v.username != "admin"}
    with pytest.raises(TShockError, match="waiting \\d+ s before the next login"):
        await tshock.get("/world/read")
    assert world.rate_buckets["127.0.0.1"] == 4
    now[0] += 61
    assert (await tshock.get("/world/read"))["name"] == "Polterheim"
    await backend.aclose()


async def test_static_token_rejected_and_missing_permissions_are_explained(
        sim: SimulatorServer, world: World) -> None:
    bad = Backend(TShockClient(TShockSettings(url=sim.url, token="0" * 64)), WikiClient())
    async with Client(build_server(bad), cache=None) as client:
        assert "TShock rejected TSHOCK_TOKEN" in await fail(client, "world_info")
    await bad.aclose()

    limited = login_backend(sim, "restbot", world.passwords["restbot"])  # may only view users and groups
    async with Client(build_server(limited), cache=None) as client:
        assert (await client.call_tool("user_list", {})).is_error is False
        error = await fail(client, "world_event", event="meteor")
        assert 'User "restbot" has no access to use the specified API endpoint' in error
        assert "tshock.rest." in error
    assert world.meteors == 0
    await limited.aclose()


async def test_tshock_status_codes_become_clear_errors() -> None:
    async def endpoint(request: Request) -> JSONResponse | PlainTextResponse:
        path = request.url.path
        if path == "/401":
            return JSONResponse({"status": "401", "error": "Not authorized. The specified API endpoint requires a "
                                                          "token."}, status_code=401)
        if path == "/500":
            return JSONResponse({"status": "500", "error": "Internal server error.", "errormsg": "boom",
                                 "stacktrace": "..."}, status_code=500)
        if path == "/html":
            return PlainTextResponse("<html>not tshock</html>")
        return JSONResponse({"status": "404", "error": "Specified API endpoint doesn't exist."}, status_code=404)

    app = Starlette(routes=[Route("/{path:path}", endpoint)])
    async with LocalHttpServer(app) as fake:
        tshock = TShockClient(TShockSettings(url=fake.base_url, token="T0KEN"))
        with pytest.raises(TShockError, match="^TShock 401: /401: Not authorized") as caught:
            await tshock.get("/401")
        assert caught.value.status == 401
        with pytest.raises(TShockError, match="/v9/x does not exist on this TShock"):
            await tshock.get("/v9/x")
        with pytest.raises(TShockError, match="TShock failed: Internal server error. boom"):
            await tshock.get("/500")
        with pytest.raises(TShockError, match="did not answer with TShock's JSON"):
            await tshock.get("/html")
        await tshock.aclose()


async def test_unreachable_tshock_is_a_clear_tool_error() -> None:
    port = closed_port()
    backend = Backend(TShockClient(TShockSettings(url=f"http://127.0.0.1:{port}", token="abc")), WikiClient())
    async with Client(build_server(backend), cache=None) as client:
        error = await fail(client, "server_status")
        assert f"cannot reach TShock at http://127.0.0.1:{port}" in error and "RestApiEnabled" in error
    await backend.aclose()


async def test_credentials_never_appear_in_results(sim: SimulatorServer, world: World) -> None:
    password = world.passwords["admin"]
    backend = login_backend(sim, "admin", password)
    async with Client(build_server(backend), cache=None) as client:
        await call(client, "server_status")
        token = next(t for t, data in world.tokens.items() if data.username == "admin")
        # TShock echoes what it was given; the backend scrubs the secrets before the model sees them.
        echoed = await fail(client, "region_info", region=password)
        assert password not in echoed and "[redacted]" in echoed
        said = await call(client, "server_raw_command", command=f"/whisper Alice {token}")
        assert text_of(said) == "<To Alice> [redacted]"
        everything = [text_of(said), echoed]
        for tool in ("server_status", "world_info", "player_info", "user_info", "server_info"):
            arguments = {"player": "Alice"} if tool == "player_info" else {"user": "admin"} if tool == "user_info" else {}
            result = await client.call_tool(tool, arguments)
            everything += [text_of(result), json.dumps(result.structured_content)]
        for text in everything:
            assert password not in text and token not in text
    await backend.aclose()


async def test_concurrent_calls_after_a_lost_token_log_in_once(sim: SimulatorServer, world: World) -> None:
    backend = login_backend(sim, "admin", world.passwords["admin"])
    await backend.tshock.get("/world/read")
    world.tokens = {k: v for k, v in world.tokens.items() if v.username != "admin"}
    replies = await asyncio.gather(*(backend.tshock.get("/world/read") for _ in range(5)))
    assert all(reply["name"] == "Polterheim" for reply in replies)
    assert world.rate_buckets["127.0.0.1"] == 4  # two logins in all: the first, and one after the loss
    await backend.aclose()
