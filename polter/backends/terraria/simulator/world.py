"""The simulator's state: one TShock server with its world, players, accounts, groups, bans, regions
and REST tokens. Everything is seeded, so two worlds built from the same seed are identical.

Tests build a :class:`World`, serve it, call tools, then inspect the same object.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from polter.backends.terraria.items import Item
from polter.backends.terraria.text import DOTNET_MAX_TICKS, datetime_to_ticks, game_time_to_clock

__all__ = [
    "Account",
    "Ban",
    "Group",
    "ItemStack",
    "Npc",
    "Player",
    "Region",
    "ServerConfig",
    "Token",
    "Warp",
    "World",
]

SUPERADMIN = "superadmin"
APPLICATION_USER = "polter-sim"


@dataclass
class ItemStack:
    net_id: int
    stack: int
    prefix: int = 0


@dataclass
class Player:
    index: int
    name: str
    account: str | None
    group: str
    ip: str
    uuid: str
    tile_x: int
    tile_y: int
    team: int = 0
    muted: bool = False
    godmode: bool = False
    dead: bool = False
    hp: int = 400
    max_hp: int = 400
    inventory: list[ItemStack | None] = field(default_factory=lambda: [None] * 50)
    armor: list[ItemStack | None] = field(default_factory=lambda: [None] * 20)
    dyes: list[ItemStack | None] = field(default_factory=lambda: [None] * 10)
    buffs: dict[int, int] = field(default_factory=dict)
    """buff id → remaining seconds."""
    messages: list[str] = field(default_factory=list)
    """What this player saw in chat (whispers, kills, broadcasts)."""

    def give(self, item: Item, amount: int, prefix: int) -> bool:
        for stack in self.inventory:
            if stack is not None and stack.net_id == item.id and stack.prefix == prefix:
                stack.stack += amount
                return True
        for slot, stack in enumerate(self.inventory):
            if stack is None:
                self.inventory[slot] = ItemStack(item.id, amount, prefix)
                return True
        return False

    def count(self, net_id: int) -> int:
        return sum(stack.stack for stack in self.inventory if stack is not None and stack.net_id == net_id)


@dataclass
class Account:
    id: int
    name: str
    group: str
    password_hash: str
    registered: datetime
    last_accessed: datetime
    known_ips: list[str] = field(default_factory=list)


@dataclass
class Group:
    name: str
    parent: str | None = None
    permissions: list[str] = field(default_factory=list)
    negated: list[str] = field(default_factory=list)
    chatcolor: tuple[int, int, int] = (255, 255, 255)
    prefix: str = ""
    suffix: str = ""


@dataclass
class Ban:
    ticket: int
    identifier: str
    reason: str
    banning_user: str
    start_ticks: int
    end_ticks: int


@dataclass
class Region:
    name: str
    x: int
    y: int
    width: int
    height: int
    owner: str
    z: int = 0
    protected: bool = True
    users: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)


@dataclass
class Warp:
    name: str
    x: int
    y: int


@dataclass
class Npc:
    type: int
    name: str
    town: bool = False
    friendly: bool = False


@dataclass
class Token:
    username: str
    group: str


@dataclass
class ServerConfig:
    name: str = "Polter Test Server"
    port: int = 7777
    max_players: int = 8
    server_password: bool = False
    tshock_version: str = "5.2.0.0"
    server_version: str = "v1.4.4.9"
    token_endpoint_authentication: bool = False
    rest_max_requests: int = 5
    rest_bucket_interval_seconds: float = 60.0
    disable_hardmode: bool = False
    allow_ingame_only_commands: bool = False
    """Demo switch: pretend a plugin lets ``/spawnmob``, ``/spawnboss`` and ``/tp`` run from REST."""
    companion_plugin: bool = True
    """Serve the Polter companion plugin's ``/polter/v1/world`` route (vanilla TShock has no hardmode read)."""
    events_url: str | None = None
    """Where the companion plugin posts game events (an MCP server's event intake), if anywhere."""
    events_secret: str | None = None
    motd: list[str] = field(default_factory=lambda: ["Welcome to [c/FFFAAA:Polter Test Server]!", "Be kind."])
    rules: list[str] = field(default_factory=lambda: ["1. No griefing.", "2. No spawn camping."])


def _default_groups() -> dict[str, Group]:
    groups = [
        Group("guest", None, ["tshock.account.register", "tshock.account.login", "tshock.partychat"]),
        Group("default", "guest", ["tshock.warp", "tshock.account.changepassword"]),
        Group("vip", "default", ["tshock.admin.noban", "tshock.reservedslot"], chatcolor=(255, 128, 0)),
        Group("newadmin", "vip", ["tshock.admin.kick", "tshock.admin.mute", "tshock.world.time.*"]),
        Group(
            "admin",
            "newadmin",
            [
                "tshock.admin.ban",
                "tshock.admin.broadcast",
                "tshock.npc.spawnmob",
                "tshock.npc.spawnboss",
                "tshock.world.time.set",
                "tshock.tp.*",
                "tshock.slap",
                "tshock.kill",
            ],
            chatcolor=(255, 0, 0),
        ),
        Group(
            "trustedadmin",
            "admin",
            [
                "tshock.cfg.*",
                "tshock.world.*",
                "tshock.npc.butcher",
                "tshock.item.give",
                "tshock.heal",
                "tshock.godmode",
                "tshock.godmode.other",
                "tshock.buff.*",
                "tshock.npc.invade",
            ],
            chatcolor=(255, 0, 0),
        ),
        Group(
            "owner",
            "trustedadmin",
            ["tshock.admin.group", "tshock.admin.region", "tshock.admin.itemban"],
            chatcolor=(255, 0, 0),
        ),
        Group("restbot", None, ["tshock.rest.useapi", "tshock.rest.users.view", "tshock.rest.groups.view"]),
    ]
    return {group.name: group for group in groups}


class World:
    """A whole TShock server's state. Mutated by the REST layer; read by tests."""

    def __init__(
        self, seed: int = 1, config: ServerConfig | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.seed = seed
        self.config = config or ServerConfig()
        self.clock = clock
        self.rng = random.Random(seed)
        self.started_at = clock()

        self.world_name = "Polterheim"
        self.world_id = self.rng.randrange(10**8, 10**9)
        self.world_seed = str(self.rng.randrange(10**8, 10**9))
        self.max_tiles_x, self.max_tiles_y = 8400, 2400
        self.game_mode = 1
        self.time = 13500.0
        self.daytime = True
        self.bloodmoon = False
        self.eclipse = False
        self.full_moon = False
        self.raining = False
        self.slime_rain = False
        self.sandstorm = False
        self.lantern_night = False
        self.wind = 0.0
        self.hardmode = False
        self.invasion_type: str | None = None
        self.invasion_size = 0
        self.autosave = True
        self.meteors = 0
        self.saves = 0
        self.reloads = 0
        self.running = True
        self.spawned: list[Npc] = []
        self.npcs: list[Npc] = [
            Npc(22, "Guide", town=True),
            Npc(17, "Merchant", town=True),
            Npc(18, "Nurse", town=True),
            Npc(1, "Blue Slime"),
            Npc(3, "Zombie"),
            Npc(3, "Zombie"),
            Npc(2, "Demon Eye"),
            Npc(46, "Bunny", friendly=True),
            Npc(488, "Target Dummy", friendly=True),
        ]

        self.groups = _default_groups()
        self.accounts: dict[str, Account] = {}
        self.passwords: dict[str, str] = {}
        """Seeded plain passwords by account name, so tests and demos can log in."""
        for name, group in [
            ("admin", SUPERADMIN),
            ("restbot", "restbot"),
            ("alice", "admin"),
            ("bob", "default"),
            ("nobody", "guest"),
        ]:
            self.add_account(name, f"{name}-{self.rng.randrange(1000, 9999)}", group)

        self.players: list[Player] = []
        for name, account in [("Alice", "alice"), ("Bob", "bob"), ("Bobby", None)]:
            self.join(name, account)
        self.players[0].give(Item(1, "Iron Pickaxe", "IronPickaxe", None), 1, 0)
        self.players[0].give(Item(8, "Torch", "Torch", None), 99, 0)
        self.players[0].hp = 250

        start = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
        self.bans: list[Ban] = [
            Ban(1, "name:Griefer", "Destroyed spawn", "admin", datetime_to_ticks(start), DOTNET_MAX_TICKS),
            Ban(
                2,
                "ip:10.0.0.66",
                "Spam bot",
                "admin",
                datetime_to_ticks(start),
                datetime_to_ticks(start + timedelta(days=1)),
            ),
        ]
        self.regions: list[Region] = [
            Region("spawn", 4150, 300, 100, 60, "admin", protected=True),
            Region("alice-house", 3900, 320, 40, 25, "alice", protected=True, users=["alice"]),
            Region("arena", 4600, 400, 200, 80, "admin", protected=False, groups=["vip"]),
        ]
        self.warps: list[Warp] = [Warp("spawn", 4200, 330), Warp("dungeon", 1200, 500), Warp("jungle", 6100, 700)]

        self.tokens: dict[str, Token] = {}
        self.application_token = self.new_token_string()
        self.tokens[self.application_token] = Token(APPLICATION_USER, SUPERADMIN)
        self.rate_buckets: dict[str, float] = {}
        self._bucket_drained_at = clock()

        self.broadcasts: list[str] = []
        """What every player saw announced (messages TShock sends to ``TSPlayer.All``)."""
        self.log: list[str] = []
        self.events: list[dict[str, object]] = []
        """Game events as the companion plugin reports them (kind, player, message, details)."""
        self.events_sent = 0

    # accounts, players, tokens ------------------------------------------------------------------

    @staticmethod
    def hash_password(password: str) -> str:
        return hashlib.sha256(f"tshock-sim:{password}".encode()).hexdigest()

    def add_account(self, name: str, password: str, group: str) -> Account:
        moment = datetime(2026, 10, 1, 8, 0, tzinfo=UTC) + timedelta(hours=len(self.accounts))
        account = Account(len(self.accounts) + 1, name, group, self.hash_password(password), moment, moment)
        self.accounts[name] = account
        self.passwords[name] = password
        return account

    def account(self, name: str) -> Account | None:
        return self.accounts.get(name)

    def account_by_id(self, account_id: int) -> Account | None:
        return next((a for a in self.accounts.values() if a.id == account_id), None)

    def join(self, name: str, account: str | None) -> Player:
        index = next(i for i in range(255) if all(p.index != i for p in self.players))
        ip = f"192.168.1.{self.rng.randrange(2, 250)}"
        uuid = "".join(self.rng.choice("0123456789ABCDEF") for _ in range(32))
        group = self.accounts[account].group if account else "guest"
        player = Player(index, name, account, group, ip, uuid, 4200 + index * 3, 330)
        self.players.append(player)
        self.players.sort(key=lambda p: p.index)
        return player

    def player(self, name: str) -> Player | None:
        """The online player called exactly ``name`` (for tests)."""
        return next((p for p in self.players if p.name == name), None)

    def find_players(self, query: str) -> list[Player]:
        """``TSPlayer.FindByNameOrID``: ``tsi:N``, ``tsn:name``, a slot number, else a name prefix."""
        if query.startswith("tsi:"):
            number = query[4:]
            return [p for p in self.players if number.isdigit() and p.index == int(number)]
        if query.startswith("tsn:"):
            return [p for p in self.players if p.name == query[4:]]
        if query.isdigit() and int(query) < 255:
            return [p for p in self.players if p.index == int(query)]
        exact = [p for p in self.players if p.name.lower() == query.lower()]
        if exact:
            return exact
        return [p for p in self.players if p.name.lower().startswith(query.lower())]

    def kick(self, player: Player, reason: str) -> None:
        self.players.remove(player)
        self.log.append(f"{player.name} was kicked: {reason}")
        self.emit("leave", player.name, f"{player.name} was kicked: {reason}")

    def emit(self, kind: str, player: str | None = None, message: str | None = None, **details: object) -> None:
        self.events.append(
            {"kind": kind, "player": player, "message": message, "details": details, "time": self.now().isoformat()}
        )

    def new_token_string(self) -> str:
        return "".join(f"{self.rng.randrange(256):02X}" for _ in range(32))

    # permissions --------------------------------------------------------------------------------

    def group_chain(self, name: str) -> list[Group]:
        chain: list[Group] = []
        group = self.groups.get(name)
        while group is not None and group not in chain:
            chain.append(group)
            group = self.groups.get(group.parent) if group.parent else None
        return chain

    def has_permission(self, group_name: str, permission: str) -> bool:
        """TShock's ``Group.HasPermission``: superadmin has all; negations win; ``a.b.*`` covers ``a.b.c``."""
        if group_name == SUPERADMIN:
            return True
        parts = permission.split(".")
        candidates = [permission] + [".".join(parts[:i]) + ".*" for i in range(len(parts) - 1, 0, -1)] + ["*"]
        for candidate in candidates:
            for group in self.group_chain(group_name):
                if candidate in group.negated:
                    return False
                if candidate in group.permissions:
                    return True
        return False

    def total_permissions(self, group_name: str) -> list[str]:
        seen: list[str] = []
        negated: set[str] = set()
        for group in self.group_chain(group_name):
            negated.update(group.negated)
            seen.extend(p for p in group.permissions if p not in seen and p not in negated)
        return seen

    # the world ----------------------------------------------------------------------------------

    def now(self) -> datetime:
        """The server's wall clock: a fixed seeded start plus real elapsed time (deterministic dates)."""
        return datetime(2026, 11, 30, 12, 0, tzinfo=UTC) + timedelta(seconds=self.clock() - self.started_at)

    def clock_text(self) -> str:
        hour, minute = game_time_to_clock(self.time, self.daytime)
        return f"{hour}:{minute:02d}"

    def uptime(self) -> str:
        seconds = int(self.clock() - self.started_at)
        days, rest = divmod(seconds, 86400)
        hours, rest = divmod(rest, 3600)
        minutes, seconds = divmod(rest, 60)
        return f"{days}.{hours:02d}:{minutes:02d}:{seconds:02d}"

    def broadcast(self, message: str) -> None:
        self.broadcasts.append(message)
        self.emit("server", None, message)
        for player in self.players:
            player.messages.append(message)

    def drain_rate_buckets(self) -> None:
        """Every interval, each IP's login bucket loses one request (TShock's timer)."""
        interval = self.config.rest_bucket_interval_seconds
        elapsed = self.clock() - self._bucket_drained_at
        steps = int(elapsed // interval) if interval > 0 else 0
        if steps <= 0:
            return
        self._bucket_drained_at += steps * interval
        for ip in list(self.rate_buckets):
            self.rate_buckets[ip] = max(0.0, self.rate_buckets[ip] - steps)
