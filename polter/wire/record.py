"""What a session's host writes about itself when it starts (``NAME.json`` beside its socket:
:mod:`polter.wire.registry`)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

__all__ = ["SessionRecord"]


class SessionRecord(BaseModel):
    """What a host writes about itself when it starts."""

    name: str
    pid: int
    version: str
    started: datetime
    cwd: str
    executable: str
