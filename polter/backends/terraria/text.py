"""Small conversions shared by the MCP server and the simulator: colour tags, .NET ticks, game time."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

__all__ = [
    "DOTNET_MAX_TICKS",
    "clock_to_game_time",
    "datetime_to_ticks",
    "game_time_to_clock",
    "strip_colour_tags",
    "ticks_to_datetime",
]

_COLOUR_TAG = re.compile(r"\[c/[0-9A-Fa-f]{6}:(.*?)\]")
DOTNET_MAX_TICKS = 3155378975999999999
"""``DateTime.MaxValue.Ticks``: TShock's end date of a permanent ban."""
_DOTNET_EPOCH = datetime(1, 1, 1, tzinfo=UTC)

DAY_LENGTH = 54000.0


def strip_colour_tags(text: str) -> str:
    """``[c/AAFFAA:2]`` → ``2``: Terraria chat colour tags mean nothing outside the game."""
    return _COLOUR_TAG.sub(r"\1", text)


def ticks_to_datetime(ticks: int) -> datetime | None:
    """.NET ticks (100 ns since 0001-01-01 UTC) to a datetime; ``None`` for ``DateTime.MaxValue`` (forever)."""
    if ticks >= DOTNET_MAX_TICKS:
        return None
    return _DOTNET_EPOCH + timedelta(microseconds=ticks // 10)


def datetime_to_ticks(moment: datetime) -> int:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    delta = moment.astimezone(UTC) - _DOTNET_EPOCH
    return (delta.days * 86400 + delta.seconds) * 10_000_000 + delta.microseconds * 10


def game_time_to_clock(time: float, daytime: bool) -> tuple[int, int]:
    """Terraria's ``(Main.time, Main.dayTime)`` to a 24-hour ``(hour, minute)``, as ``/time`` prints it.

    Day starts at 04:30 with ``time=0``; night starts at 19:30 with ``time=0``.
    """
    hours = time / 3600.0 + 4.5 + (0 if daytime else 15)
    hours %= 24
    hour = int(hours)
    minute = int((hours - hour) * 60)
    return hour, minute


def clock_to_game_time(hour: int, minute: int) -> tuple[float, bool]:
    """The inverse of :func:`game_time_to_clock`, as TShock's ``/time hh:mm`` sets it."""
    seconds = (hour * 60 + minute) * 60.0 - 4.5 * 3600
    if seconds < 0:
        seconds += 24 * 3600
    if seconds < DAY_LENGTH:
        return seconds, True
    return seconds - DAY_LENGTH, False
