"""wiki_search and item_lookup's stats against a fake MediaWiki on 127.0.0.1, and against a closed port."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from backends.terraria.helpers import closed_port, data, fail, hosted
from mcp import Client
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from polter.backends.terraria.client import TShockClient, TShockSettings
from polter.backends.terraria.localhttp import LocalHttpServer
from polter.backends.terraria.server import Backend, build_server
from polter.backends.terraria.wiki import WikiClient

SEARCH = {"batchcomplete": True, "query": {"searchinfo": {"totalhits": 837}, "search": [
    {"ns": 0, "title": "King Slime", "pageid": 1, "wordcount": 2000,
     "snippet": "<span class=\"searchmatch\">King</span> <span class=\"searchmatch\">Slime</span> is a pre-Hardmode boss &amp; more"},
    {"ns": 0, "title": "Slime Crown", "pageid": 2, "wordcount": 300, "snippet": "Summons King Slime"},
]}}
PARSE = {"parse": {"title": "King Slime", "pageid": 1, "text": (
    "<div class=\"infobox\">stats</div><p><b>King Slime</b> is a pre-<a href=\"/wiki/Hardmode\">Hardmode</a> boss.</p>"
    "<p>It spawns in the outer thirds of the world.</p>")}}
CARGO = {"cargoquery": [{"title": {"itemid": "4956", "name": "Zenith", "type": "weapon^crafting material",
                                   "rare": "10", "stack": "1", "damage": "190", "damagetype": "melee",
                                   "tooltip": "", "hardmode": "1"}}]}


@pytest.fixture
async def fake_wiki() -> AsyncIterator[tuple[str, list[Request]]]:
    seen: list[Request] = []

    async def api(request: Request) -> JSONResponse:
        seen.append(request)
        action = request.query_params.get("action")
        if action == "query" and request.query_params.get("list") == "search":
            if request.query_params["srsearch"] == "broken":
                return JSONResponse({"error": {"code": "internal", "info": "Search is disabled"}})
            return JSONResponse(SEARCH)
        if action == "parse":
            return JSONResponse(PARSE)
        if action == "cargoquery":
            return JSONResponse(CARGO if request.query_params.get("where") == "itemid=4956" else {"cargoquery": []})
        return JSONResponse({"error": {"code": "badvalue", "info": "Unrecognized value for parameter action"}})

    app = Starlette(routes=[Route("/api.php", api), Route("/zh/api.php", api)])
    async with LocalHttpServer(app) as server:
        yield server.base_url, seen


@pytest.fixture
async def wiki_client(fake_wiki: tuple[str, list[Request]]) -> AsyncIterator[Client]:
    backend = Backend(TShockClient(TShockSettings(url=f"http://127.0.0.1:{closed_port()}", token="wiki-test-token")),
                      WikiClient(fake_wiki[0], min_interval=0))
    async with hosted(Client(build_server(backend), cache=None)) as client:
        yield client
    await backend.aclose()


async def test_wiki_search_returns_plain_snippets_and_urls(wiki_client: Client,
                                                            fake_wiki: tuple[str, list[Request]]) -> None:
    base, seen = fake_wiki
    found = await data(wiki_client, "wiki_search", query="king slime", limit=2, summary=True)
    assert found["total_hits"] == 837
    assert found["results"][0] == {"title": "King Slime", "url": f"{base}/wiki/King_Slime", "wordcount": 2000,
                                   "snippet": "King Slime is a pre-Hardmode boss & more"}
    assert found["summary"] == {"title": "King Slime", "text": "King Slime is a pre-Hardmode boss. It spawns in "
                                                               "the outer thirds of the world."}
    search = seen[0]
    assert search.url.path == "/api.php" and search.query_params["srlimit"] == "2"
    assert search.query_params["format"] == "json" and search.headers["user-agent"].startswith("polter-terraria/")


async def test_wiki_search_in_chinese_uses_the_zh_api(wiki_client: Client,
                                                       fake_wiki: tuple[str, list[Request]]) -> None:
    base, seen = fake_wiki
    found = await data(wiki_client, "wiki_search", query="史莱姆王", lang="zh")
    assert seen[-1].url.path == "/zh/api.php" and found["results"][0]["url"] == f"{base}/zh/wiki/King_Slime"


async def test_wiki_errors_are_reported(wiki_client: Client) -> None:
    assert "the wiki refused the query: Search is disabled" in await fail(wiki_client, "wiki_search", query="broken")


async def test_item_lookup_adds_wiki_stats(wiki_client: Client) -> None:
    zenith = await data(wiki_client, "item_lookup", name_or_id="4956", stats=True)
    assert zenith["stats"]["damage"] == "190" and zenith["stats"]["type"] == "weapon^crafting material"
    assert zenith["items"][0]["name_zh"] == "天顶剑"


async def test_unreachable_wiki_says_so() -> None:
    port = closed_port()
    backend = Backend(TShockClient(TShockSettings(url="http://127.0.0.1:9", token="wiki-test-token")),
                      WikiClient(f"http://127.0.0.1:{port}", min_interval=0))
    async with Client(build_server(backend), cache=None) as client:
        error = await fail(client, "wiki_search", query="zenith")
        assert f"the Terraria wiki at http://127.0.0.1:{port} is unreachable" in error
        assert "item_lookup works offline" in error
    await backend.aclose()


def test_wiki_url_comes_from_the_environment() -> None:
    assert WikiClient.from_env({"TERRARIA_WIKI_URL": "http://127.0.0.1:1234/"}).api_url("zh") == \
        "http://127.0.0.1:1234/zh/api.php"
    assert WikiClient.from_env({}).api_url("en") == "https://terraria.wiki.gg/api.php"
