"""Acting on regions, groups and accounts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field, SecretStr

from polter.backends.terraria.tools._common import ACTS, DESTRUCTIVE, quote
from polter.errors import TShockError

if TYPE_CHECKING:
    from polter.backends.terraria.server import Backend, TerrariaServer

Name = Annotated[str, Field(min_length=1, max_length=64)]
Permission = Annotated[str, Field(pattern=r"^!?[A-Za-z0-9_.*-]+$", max_length=100)]


def register(server: TerrariaServer, backend: Backend) -> None:
    tshock = backend.tshock

    @server.tool(annotations=ACTS, structured_output=False)
    async def region_protect(region: Name, protected: bool) -> str:
        """Turn build protection of a region on or off."""
        return (
            await tshock.command(f"/region protect {quote(region)} {str(protected).lower()}", expect=r"^Marked region ")
        )[0]

    @server.tool(annotations=ACTS, structured_output=False)
    async def region_allow(
        region: Name,
        user: Annotated[str | None, Field(max_length=64)] = None,
        group: Annotated[str | None, Field(max_length=64)] = None,
        allow: bool = True,
    ) -> str:
        """Let one account (user) or one group build in a region, or take that right away (allow=false)."""
        if (user is None) == (group is None):
            raise ToolError("give exactly one of user or group")
        sub = ("allow" if allow else "remove") + ("" if user is not None else "g")
        who = user if user is not None else group
        assert who is not None
        return (
            await tshock.command(
                f"/region {sub} {quote(who)} {quote(region)}", expect=r"^(Added|Removed) (user|group) "
            )
        )[0]

    @server.tool(annotations=DESTRUCTIVE, structured_output=False)
    async def region_delete(region: Name) -> str:
        """Delete a region and its protection for good."""
        return (await tshock.command(f"/region delete {quote(region)}", expect=r"^Deleted region "))[0]

    @server.tool(annotations=DESTRUCTIVE, structured_output=False)
    async def group_permissions(
        group: Name,
        add: list[Permission] | None = None,
        remove: list[Permission] | None = None,
        create_if_missing: bool = False,
    ) -> str:
        """Add or remove permission nodes on a group (optionally creating it). Granting * or tshock.rest.*
        hands out full control of the server."""
        add, remove = add or [], remove or []
        if not add and not remove and not create_if_missing:
            raise ToolError("nothing to do: give permissions to add or remove")
        try:
            await tshock.get("/v2/groups/read", group=group)
        except TShockError as exc:
            if exc.status != 400 or not create_if_missing:
                raise
            await tshock.get("/v2/groups/create", group=group)
        if add:
            await tshock.command(f"/group addperm {quote(group)} {' '.join(add)}", expect=r"modified successfully")
        if remove:
            await tshock.command(f"/group delperm {quote(group)} {' '.join(remove)}", expect=r"modified successfully")
        now = await tshock.get("/v2/groups/read", group=group)
        return f"Group {group} now has: {', '.join(now['permissions']) or 'no permissions of its own'}."

    @server.tool(annotations=ACTS, structured_output=False)
    async def user_set_group(
        user: Name,
        group: Annotated[str | None, Field(max_length=64)] = None,
        password: Annotated[SecretStr | None, Field(min_length=4, description="a new password; never echoed")] = None,
    ) -> str:
        """Move an account to another group (superadmin or owner gives full control), and/or set its
        password."""
        if group is None and password is None:
            raise ToolError("give a group, a password, or both")
        reply = await tshock.get(
            "/v2/users/update",
            user=user,
            type="name",
            group=group,
            password=password.get_secret_value() if password else None,
        )
        said = [reply[key] for key in ("group-response", "password-response") if key in reply]
        return f"{user}: {'; '.join(said)}."
