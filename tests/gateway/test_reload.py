"""A changed servers file, taken into the running gateway: by `POST /control/servers/reload` and by
the watcher. New servers start with their endpoint, removed ones stop, changed ones restart on the same
endpoint; a broken file changes nothing."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import tomli_w
from support.gateway import FIXTURE_SERVER, controller, start_gateway
from support.waiting import wait_until

from polter.servers import load_servers

FIXTURE = {"command": sys.executable, "args": [str(FIXTURE_SERVER)]}
TIME = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}


def _write(path: Path, **servers: dict[str, object]) -> Path:
    path.write_text(tomli_w.dumps({"servers": servers}), encoding="utf-8")
    return path


async def test_reload_adds_restarts_and_removes_servers_and_a_broken_file_changes_nothing(tmp_path: Path) -> None:
    servers_file = _write(tmp_path / "servers.toml", fixture=FIXTURE)
    async with start_gateway(
        tmp_path, servers=load_servers(servers_file), servers_file=servers_file, watch_servers=False
    ) as harness:
        pane = await harness.pane("open")
        async with harness.client("fixture", pane.token) as fixture, controller(harness) as watcher:
            first_pid = (await fixture.call_tool("pid", {})).content[0].text

            _write(servers_file, fixture=FIXTURE, time=TIME)
            # Two reloads at once (the watcher and a command): one adds, the other finds it there.
            report, again = await asyncio.gather(harness.admin.reload_servers(), harness.admin.reload_servers())
            assert report.applied and report.added == ["time"] and report.unchanged == ["fixture"]
            assert again.applied and not again.added and again.unchanged == ["fixture", "time"]
            assert [task.get_name() for task in asyncio.all_tasks()].count("upstream:time") == 1
            async with harness.client("time", pane.token) as time_client:
                answer = await time_client.call_tool("get_current_time", {"timezone": "UTC"})
                assert not answer.is_error and "UTC" in answer.content[0].text
            assert (await fixture.call_tool("pid", {})).content[0].text == first_pid, "fixture untouched"
            await wait_until(lambda: any(e.type == "servers" for e in watcher.events), message="servers event")

            servers_file.write_text("[servers.fixture\ncommand = 'x'\n", encoding="utf-8")
            broken = await harness.admin.reload_servers()
            assert not broken.applied and broken.problems and f"{servers_file}:1:" in broken.problems[0]
            assert sorted(harness.gateway.pool.names) == ["fixture", "time"]

            _write(servers_file, fixture={**FIXTURE, "env": {"FIXTURE_NAME": "renamed"}})
            changed = await harness.admin.reload_servers()
            assert changed.reconfigured == ["fixture"] and changed.removed == ["time"] and not changed.added
            upstream = harness.gateway.pool.get("fixture")
            await wait_until(
                lambda: upstream.state == "running" and upstream.server_info.name == "renamed",
                message="fixture restarted with its new entry",
            )
            # The same session goes on, against the restarted server.
            assert (await fixture.call_tool("pid", {})).content[0].text != first_pid
        async with harness.raw(pane.token) as http:
            gone = await http.post("/mcp/time", json={})
            assert gone.status_code == 404 and "no such server" in gone.text
        status = await harness.admin.status()
        assert [server.name for server in status.servers] == ["fixture"]


async def test_a_changed_timeout_applies_without_a_restart(tmp_path: Path) -> None:
    servers_file = _write(tmp_path / "servers.toml", fixture=FIXTURE)
    async with start_gateway(
        tmp_path, servers=load_servers(servers_file), servers_file=servers_file, watch_servers=False
    ) as harness:
        pane = await harness.pane("open")
        async with harness.client("fixture", pane.token) as fixture:
            first_pid = (await fixture.call_tool("pid", {})).content[0].text
            _write(servers_file, fixture={**FIXTURE, "timeout": 5, "max_timeout": 50})
            report = await harness.admin.reload_servers()
            assert report.reconfigured == ["fixture"]
            upstream = harness.gateway.pool.get("fixture")
            assert (upstream.config.timeout, upstream.config.max_timeout) == (5, 50)
            assert (await fixture.call_tool("pid", {})).content[0].text == first_pid  # the same process
            assert upstream.restarts == 0


async def test_the_watcher_applies_a_written_servers_file(tmp_path: Path) -> None:
    servers_file = _write(tmp_path / "servers.toml", fixture=FIXTURE)
    async with start_gateway(tmp_path, servers=load_servers(servers_file), servers_file=servers_file) as harness:
        pane = await harness.pane("open")
        _write(servers_file, fixture=FIXTURE, time=TIME)
        await wait_until(lambda: "time" in harness.gateway.pool.names, message="time added by the watcher")
        async with harness.client("time", pane.token) as time_client:
            assert not (await time_client.call_tool("get_current_time", {"timezone": "UTC"})).is_error


async def test_the_watcher_ignores_files_the_servers_file_is_not(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The gateway's own state and a log written beside the servers file (`polter gateway -v 2>log`) wake
    nothing; writing the servers file still does (it used to log its own "change detected" for ever)."""
    servers_file = _write(tmp_path / "servers.toml", fixture=FIXTURE)
    log = tmp_path / "gateway.log"
    caplog.set_level("DEBUG", logger="watchfiles.main")
    async with start_gateway(
        tmp_path, servers=load_servers(servers_file), servers_file=servers_file, state_dir=tmp_path
    ) as harness:
        pane = await harness.pane("open")
        async with harness.client("fixture", pane.token) as fixture:  # the audit log is written beside it
            for line in range(30):
                await fixture.call_tool("pid", {})
                with log.open("a") as file:
                    file.write(f"line {line}\n")
        _write(servers_file, fixture=FIXTURE, time=TIME)
        await wait_until(lambda: "time" in harness.gateway.pool.names, message="time added by the watcher")
    woken = [record.getMessage() for record in caplog.records if "detected" in record.getMessage()]
    assert woken and all(str(servers_file) in message for message in woken), woken


async def test_a_gateway_without_a_servers_file_says_so(tmp_path: Path) -> None:
    async with start_gateway(tmp_path) as harness:
        async with harness.raw() as http:
            answer = await http.post(
                "/control/servers/reload", headers={"Authorization": f"Bearer {harness.admin_token}"}
            )
        assert answer.status_code == 409 and "without a servers file" in answer.json()["error"]
