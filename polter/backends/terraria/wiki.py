"""The Terraria wiki's MediaWiki API (terraria.wiki.gg): search, page summaries and the Cargo ``Items`` table.

The base URL comes from ``TERRARIA_WIKI_URL`` (tests point it at a fake MediaWiki on 127.0.0.1).
When the wiki cannot be reached the error says so plainly, so the model can fall back to
``item_lookup``'s offline table instead of guessing.
"""

from __future__ import annotations

import asyncio
import html
import re
import time
from collections.abc import Mapping
from typing import Any, Literal

import httpx

from polter.errors import BackendError

__all__ = ["ENV_WIKI_URL", "WikiClient", "WikiUnavailable"]

ENV_WIKI_URL = "TERRARIA_WIKI_URL"
DEFAULT_WIKI_URL = "https://terraria.wiki.gg"
Lang = Literal["en", "zh"]

_TAG = re.compile(r"<[^>]+>")


class WikiUnavailable(BackendError):
    """The wiki did not answer (no network, wrong URL, an error page)."""


def plain_text(fragment: str) -> str:
    """HTML (search snippets, parsed pages) to one line of text."""
    return re.sub(r"\s+", " ", html.unescape(_TAG.sub("", fragment))).strip()


class WikiClient:
    """A polite MediaWiki client: a descriptive User-Agent and at most one request per ``min_interval``."""

    def __init__(
        self,
        base_url: str = DEFAULT_WIKI_URL,
        *,
        timeout: float = 10.0,
        min_interval: float = 1.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.min_interval = min_interval
        self._http = httpx.AsyncClient(
            timeout=timeout,
            transport=transport,
            follow_redirects=True,
            headers={"User-Agent": "polter-terraria/0.1 (Terraria admin MCP server; https://github.com/polter)"},
        )
        self._lock = asyncio.Lock()
        self._last = 0.0

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> WikiClient:
        return cls(env.get(ENV_WIKI_URL, "").strip() or DEFAULT_WIKI_URL)

    async def aclose(self) -> None:
        await self._http.aclose()

    def api_url(self, lang: Lang) -> str:
        return f"{self.base_url}{'/zh' if lang == 'zh' else ''}/api.php"

    def page_url(self, title: str, lang: Lang) -> str:
        return f"{self.base_url}{'/zh' if lang == 'zh' else ''}/wiki/{title.replace(' ', '_')}"

    async def _query(self, lang: Lang, **params: Any) -> dict[str, Any]:
        async with self._lock:
            wait = self._last + self.min_interval - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)  # the wiki asks for about one request a second
            self._last = time.monotonic()
        url = self.api_url(lang)
        try:
            reply = await self._http.get(url, params={**params, "format": "json", "formatversion": "2"})
        except httpx.HTTPError as exc:
            raise WikiUnavailable(
                f"the Terraria wiki at {self.base_url} is unreachable ({type(exc).__name__}). "
                "wiki_search needs network access to it; item_lookup works offline."
            ) from None
        if reply.status_code != 200:
            raise WikiUnavailable(f"the Terraria wiki at {self.base_url} answered HTTP {reply.status_code}")
        try:
            body = reply.json()
        except ValueError:
            raise WikiUnavailable(f"{url} did not answer with MediaWiki JSON; check {ENV_WIKI_URL}") from None
        if "error" in body:
            raise WikiUnavailable(f"the wiki refused the query: {body['error'].get('info', body['error'])}")
        return body

    async def search(self, query: str, limit: int, lang: Lang) -> tuple[int, list[dict[str, Any]]]:
        body = await self._query(
            lang, action="query", list="search", srsearch=query, srlimit=limit, srprop="snippet|wordcount|timestamp"
        )
        found = body.get("query", {})
        hits = [
            {
                "title": hit["title"],
                "snippet": plain_text(hit.get("snippet", "")),
                "url": self.page_url(hit["title"], lang),
                "wordcount": hit.get("wordcount"),
            }
            for hit in found.get("search", [])
        ]
        return int(found.get("searchinfo", {}).get("totalhits", len(hits))), hits

    async def summary(self, title: str, lang: Lang, max_chars: int = 800) -> str:
        """The page's first paragraphs as plain text."""
        body = await self._query(lang, action="parse", page=title, prop="text", redirects=1)
        text = body.get("parse", {}).get("text", "")
        if isinstance(text, dict):  # formatversion 1
            text = text.get("*", "")
        paragraphs = [plain_text(p) for p in re.findall(r"<p>(.*?)</p>", text, flags=re.S)]
        joined = " ".join(p for p in paragraphs if p)
        return joined if len(joined) <= max_chars else joined[: max_chars - 1].rsplit(" ", 1)[0] + "…"

    async def item_stats(self, item_id: int, lang: Lang = "en") -> dict[str, str] | None:
        """One row of the Cargo ``Items`` table (all values are strings; lists are ``^``-separated)."""
        body = await self._query(
            lang,
            action="cargoquery",
            tables="Items",
            limit=1,
            where=f"itemid={item_id}",
            fields="itemid,name,type,rare,stack,damage,damagetype,defense,tooltip,hardmode,buy,sell",
        )
        rows = body.get("cargoquery", [])
        if not rows:
            return None
        row = rows[0].get("title", {})
        return {key: plain_text(str(value)) for key, value in row.items() if value not in (None, "")}
