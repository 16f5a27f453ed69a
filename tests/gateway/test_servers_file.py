"""The servers file: stdio and HTTP entries, ${VAR} expansion, and errors with file, line and field."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from polter.errors import ConfigError
from polter.servers import HttpServer, StdioServer, check_servers, load_servers


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "servers.toml"
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def test_stdio_and_http_servers_with_variables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GH_TOKEN", "secret-123")
    monkeypatch.delenv("UNSET_THING", raising=False)
    path = _write(
        tmp_path,
        """
        [servers.time]
        command = "uvx"
        args = ["mcp-server-time", "--local-timezone", "${TZ_NAME:-UTC}"]
        env = { HOME_COPY = "${HOME}" }
        cwd = "~/work"

        [servers.github]
        url = "https://example.invalid/mcp"
        headers = { Authorization = "Bearer ${GH_TOKEN}" }

        [servers.off]
        command = "x"
        enabled = false
    """,
    )
    servers = load_servers(path)
    assert servers == {
        "time": StdioServer(
            command="uvx",
            args=["mcp-server-time", "--local-timezone", "UTC"],
            env={"HOME_COPY": str(Path.home())},
            cwd="~/work",
        ),
        "github": HttpServer(url="https://example.invalid/mcp", headers={"Authorization": "Bearer secret-123"}),
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[servers.a]\ncommand = "x"\nargs = "not a list"\n',
            "servers.toml:3: servers.a.args: Input should be a valid list",
        ),
        (
            '[servers.a]\ncommand = "x"\ncolour = "red"\n',
            "servers.toml:3: servers.a.colour: Extra inputs are not permitted",
        ),
        ('[servers.a]\ncommand = "x"\nurl = "http://h/mcp"\n', "servers.toml:1: servers.a: give either command"),
        ('[servers.a]\nurl = "ftp://h"\n', "servers.toml:2: servers.a.url: String should match pattern"),
        ('[servers.polter]\ncommand = "x"\n', "servers: Value error, 'polter' is reserved"),
        ('[servers."bad name"]\ncommand = "x"\n', "servers.bad name"),
        (
            '[servers.a]\ncommand = "${UNSET_THING}"\n',
            "servers.toml:2: servers.a.command: environment variable UNSET_THING",
        ),
        ('[servers.a\ncommand = "x"\n', "servers.toml:1: invalid TOML"),
        (
            '[servers.a]\nurl = "http://h/mcp"\ntimeout = 0\n',
            "servers.toml:3: servers.a.timeout: Input should be greater",
        ),
        (
            '[servers.a]\ncommand = "x"\ntimeout = 10\nmax_timeout = 5\n',
            "servers.toml:1: servers.a: Value error, max_timeout (5) is shorter than timeout (10)",
        ),
    ],
)
def test_problems_name_file_line_and_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, expected: str
) -> None:
    monkeypatch.delenv("UNSET_THING", raising=False)
    path = _write(tmp_path, text)
    _, problems = check_servers(path)
    assert problems, "the problem is reported"
    assert expected in str(problems[0]).replace(str(tmp_path) + "/", ""), str(problems[0])
    with pytest.raises(ConfigError):
        load_servers(path)


def test_every_problem_is_reported_and_a_missing_default_file_is_no_servers(tmp_path: Path) -> None:
    path = _write(tmp_path, "[servers.a]\nargs = 1\n[servers.b]\nurl = 3\n")
    _, problems = check_servers(path)
    assert {problem.field for problem in problems} >= {"servers.a.command", "servers.a.args", "servers.b.url"}
    assert load_servers(tmp_path / "absent.toml") == {}
    with pytest.raises(ConfigError, match="does not exist"):
        load_servers(tmp_path / "absent.toml", required=True)


async def test_a_servers_file_in_a_folder_made_later_is_watched_once_it_is_written(tmp_path: Path) -> None:
    import asyncio

    from polter.servers import watch_file

    path = tmp_path / "config" / "polter" / "servers.toml"
    written = asyncio.Event()

    async def watch() -> None:
        async for _ in watch_file(path):
            written.set()
            return

    task = asyncio.create_task(watch())
    try:
        for attempt in range(40):  # the watcher starts asynchronously: make the change until it is seen
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# attempt {attempt}\n", encoding="utf-8")
            try:
                await asyncio.wait_for(written.wait(), 0.5)
                break
            except TimeoutError:
                continue
        assert written.is_set()
    finally:
        task.cancel()
