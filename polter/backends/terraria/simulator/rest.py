"""TShock 5.2's REST API over a :class:`World`: routes, tokens, the login rate limit and the envelope.

Faithful where a client can tell: any HTTP method, query-string or form parameters, a string
``"status"`` equal to the HTTP status, pretty-printed JSON, TShock's exact error texts, redirects with
``upgrade`` fields, and the known quirks (read-only ``/v3/world/bloodmoon``, ``killfriendly``
effectively required, no player-ban route).
"""

from __future__ import annotations

import json
import logging

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from polter.backends.terraria.simulator.envelope import (
    BAD_TOKEN,
    GROUP_GONE,
    NO_TOKEN,
    NOT_FOUND,
    Body,
    Call,
    Endpoint,
    error,
)
from polter.backends.terraria.simulator.routes_accounts import (
    bans_create,
    bans_destroy,
    bans_list,
    bans_read,
    groups_create,
    groups_destroy,
    groups_list,
    groups_read,
    groups_update,
    users_activelist,
    users_create,
    users_destroy,
    users_list,
    users_read,
    users_update,
)
from polter.backends.terraria.simulator.routes_server import (
    lists_players,
    players_kick,
    players_kill,
    players_list,
    players_mute,
    players_read_v3,
    players_read_v4,
    polter_world,
    server_broadcast,
    server_motd,
    server_off,
    server_rawcmd,
    server_reload,
    server_rules,
    server_status,
    token_create,
    token_destroy,
    token_destroy_all,
    token_test,
    verb_setter,
    world_autosave_v3,
    world_bloodmoon_v3,
    world_butcher,
    world_meteor,
    world_read,
    world_save,
)
from polter.backends.terraria.simulator.world import SUPERADMIN, World

__all__ = ["create_app"]

log = logging.getLogger("polter.terraria.sim")


ENDPOINTS = [
    Endpoint("/v2/token/create", token_create, token=False),
    Endpoint("/token/destroy/{token}", token_destroy),
    Endpoint("/v3/token/destroy/all", token_destroy_all, ("tshock.rest.manage",)),
    Endpoint("/tokentest", token_test),
    Endpoint("/v2/server/status", server_status, status_route=True),
    Endpoint("/v3/server/motd", server_motd, status_route=True),
    Endpoint("/v3/server/rules", server_rules, status_route=True),
    Endpoint("/v2/server/broadcast", server_broadcast, ("tshock.rest.broadcast",)),
    Endpoint("/v3/server/reload", server_reload, ("tshock.rest.cfg",)),
    Endpoint("/v2/server/off", server_off, ("tshock.rest.maintenance",)),
    Endpoint("/v3/server/rawcmd", server_rawcmd, ("tshock.rest.command",)),
    Endpoint("/v2/users/activelist", users_activelist, ("tshock.rest.users.view",)),
    Endpoint("/v2/users/create", users_create, ("tshock.rest.users.manage",)),
    Endpoint("/v2/users/list", users_list, ("tshock.rest.users.view",)),
    Endpoint("/v2/users/read", users_read, ("tshock.rest.users.view",)),
    Endpoint("/v2/users/destroy", users_destroy, ("tshock.rest.users.manage",)),
    Endpoint("/v2/users/update", users_update, ("tshock.rest.users.manage",)),
    Endpoint("/v3/bans/create", bans_create, ("tshock.rest.ban", "tshock.rest.bans.manage")),
    Endpoint("/v3/bans/list", bans_list, ("tshock.rest.bans.view",)),
    Endpoint("/v3/bans/read", bans_read, ("tshock.rest.bans.view",)),
    Endpoint("/v3/bans/destroy", bans_destroy, ("tshock.rest.bans.manage",)),
    Endpoint("/world/read", world_read),
    Endpoint("/world/meteor", world_meteor, ("tshock.rest.causeevents",)),
    Endpoint(
        "/world/bloodmoon/{bloodmoon}",
        verb_setter("bloodmoon", "bloodmoon", "Blood Moon", "/v3/world/bloodmoon"),
        ("tshock.rest.causeevents",),
    ),
    Endpoint("/v3/world/bloodmoon", world_bloodmoon_v3, ("tshock.rest.causeevents",)),
    Endpoint("/v2/world/save", world_save, ("tshock.rest.cfg",)),
    Endpoint(
        "/v2/world/autosave/state/{state}",
        verb_setter("state", "autosave", "AutoSave", "/v3/world/autosave"),
        ("tshock.rest.cfg",),
    ),
    Endpoint("/v3/world/autosave", world_autosave_v3, ("tshock.rest.cfg",)),
    Endpoint("/v2/world/butcher", world_butcher, ("tshock.rest.butcher",)),
    Endpoint("/lists/players", lists_players),
    Endpoint("/v2/players/list", players_list),
    Endpoint("/v3/players/read", players_read_v3, ("tshock.rest.users.info",)),
    Endpoint("/v4/players/read", players_read_v4, ("tshock.rest.users.info",)),
    Endpoint("/v2/players/kick", players_kick, ("tshock.rest.kick",)),
    Endpoint("/v2/players/kill", players_kill, ("tshock.rest.kill",)),
    Endpoint("/v2/players/mute", players_mute(True), ("tshock.rest.mute",)),
    Endpoint("/v2/players/unmute", players_mute(False), ("tshock.rest.mute",)),
    Endpoint("/v2/groups/list", groups_list, ("tshock.rest.groups.view",)),
    Endpoint("/v2/groups/read", groups_read, ("tshock.rest.groups.view",)),
    Endpoint("/v2/groups/create", groups_create, ("tshock.rest.groups.manage",)),
    Endpoint("/v2/groups/destroy", groups_destroy, ("tshock.rest.groups.manage",)),
    Endpoint("/v2/groups/update", groups_update, ("tshock.rest.groups.manage",)),
]
PLUGIN_ENDPOINTS = [Endpoint("/polter/v1/world", polter_world)]

REDIRECTS: dict[str, tuple[str, str | None]] = {
    "/status": ("/v2/server/status", None),
    "/token/create": ("/v2/token/create", None),
    "/world/save": ("/v2/world/save", None),
    "/world/autosave": ("/v3/world/autosave", None),
    "/players/read": ("/v3/players/read", "v4/players/read"),
    **{
        f"/server/{name}": (f"/v{3 if name in ('motd', 'rules', 'rawcmd') else 2}/server/{name}", None)
        for name in ("motd", "rules", "broadcast", "off", "rawcmd")
    },
    **{
        f"/users/{name}": (f"/v2/users/{name}", None)
        for name in ("activelist", "create", "list", "read", "destroy", "update")
    },
    **{
        f"{prefix}/bans/{name}": (f"/v3/bans/{name}", None)
        for prefix in ("", "/v2")
        for name in ("create", "list", "read", "destroy")
        if (prefix, name) != ("/v2", "create")
    },
    **{f"/players/{name}": (f"/v2/players/{name}", None) for name in ("list", "kick", "kill", "mute", "unmute")},
    **{f"/groups/{name}": (f"/v2/groups/{name}", None) for name in ("list", "read", "create", "destroy", "update")},
}


class TShockRest:
    """Route matching and ``SecureRest.ExecuteCommand``'s token checks over one world."""

    def __init__(self, world: World) -> None:
        self.world = world
        endpoints = ENDPOINTS + (PLUGIN_ENDPOINTS if world.config.companion_plugin else [])
        self.fixed = {e.path.lower(): e for e in endpoints if e.pattern is None}
        self.templated = [(e.pattern, e) for e in endpoints if e.pattern is not None]

    def match(self, path: str) -> tuple[Endpoint, dict[str, str]] | None:
        endpoint = self.fixed.get(path.lower())
        if endpoint is not None:
            return endpoint, {}
        for pattern, templated in self.templated:
            assert pattern is not None
            found = pattern.match(path)
            if found:
                return templated, {k: v for k, v in found.groupdict().items()}
        return None

    def handle(self, path: str, params: dict[str, str], ip: str) -> Body:
        path = path.rstrip("/") or "/"
        upgrade: str | None = None
        if path.lower() in REDIRECTS:
            path, upgrade = REDIRECTS[path.lower()]
        matched = self.match(path)
        if matched is None:
            return error(404, NOT_FOUND)
        endpoint, verbs = matched
        call = Call(self.world, params, verbs, None, ip)
        needs_token = endpoint.token and (not endpoint.status_route or self.world.config.token_endpoint_authentication)
        if needs_token or (endpoint.status_route and params.get("token") in self.world.tokens):
            refusal = self.authorise(call, endpoint)
            if refusal is not None and needs_token:
                return refusal
        try:
            body = endpoint.handler(call)
        except Exception as exc:  # TShock's 500 body
            return {
                "status": "500",
                "error": "Internal server error.",
                "errormsg": str(exc),
                "stacktrace": f"   at {endpoint.handler.__name__}",
            }
        if upgrade is not None:
            body["upgrade"] = upgrade
        return body

    def authorise(self, call: Call, endpoint: Endpoint) -> Body | None:
        token = call.params.get("token")
        if token is None:
            return error(401, NO_TOKEN)
        data = self.world.tokens.get(token)
        if data is None:
            return error(403, BAD_TOKEN)
        if data.group != SUPERADMIN and data.group not in self.world.groups:
            del self.world.tokens[token]
            return error(403, GROUP_GONE)
        if endpoint.permissions and not any(self.world.has_permission(data.group, p) for p in endpoint.permissions):
            return error(
                403, f'Not authorized. User "{data.username}" has no access to use the specified API endpoint.'
            )
        call.token = data
        return None


async def deliver_events(world: World) -> None:
    """Post what happened since the last delivery to the event intake, as the companion plugin would."""
    assert world.config.events_url is not None
    pending = world.events[world.events_sent :]
    headers = {"Authorization": f"Bearer {world.config.events_secret}"} if world.config.events_secret else {}
    try:
        async with httpx.AsyncClient(timeout=5) as http:
            reply = await http.post(world.config.events_url, json=pending, headers=headers)
        if reply.status_code != 202:
            log.warning("event intake refused %d events: HTTP %d %s", len(pending), reply.status_code, reply.text)
    except httpx.HTTPError as exc:
        log.warning("cannot post %d events to %s: %s", len(pending), world.config.events_url, exc)
    world.events_sent += len(pending)  # a plugin does not queue forever either


def create_app(world: World) -> Starlette:
    """An ASGI app serving ``world`` the way TShock's REST listener would."""
    rest = TShockRest(world)

    async def endpoint(request: Request) -> Response:
        params = {k: v for k, v in request.query_params.multi_items()}
        if request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            form = await request.form()
            params.update({k: str(v) for k, v in form.multi_items()})
        ip = request.client.host if request.client else "127.0.0.1"
        body = rest.handle(request.url.path, params, ip)
        if world.config.companion_plugin and world.config.events_url and world.events_sent < len(world.events):
            await deliver_events(world)
        text = json.dumps(body, indent=2, ensure_ascii=False)
        if params.get("jsonp"):
            text = f"{params['jsonp']}({text});"
        return Response(
            text,
            status_code=int(body["status"]),
            media_type="application/json; charset=utf-8",
            headers={"Server": f"TShockAPI/{world.config.tshock_version}", "Connection": "close"},
        )

    methods = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]
    app = Starlette(routes=[Route("/{path:path}", endpoint, methods=methods)])
    app.state.world = world
    return app
