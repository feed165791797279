"""Size limits of uploads: `MAX_UPLOAD_SIZE` for attachments, the media limits of the instance settings
for images (docs/reference/limits.md). The instance settings row (id 1, `data.media_limits`) is written by instance
administration; until a value is set the defaults of 5.3 apply, and a value out of range is ignored."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.core.limits import DEFAULT_MEDIA_LIMITS
from meadhall.db.schema import instance_settings

SETTINGS_ROW = 1
MEDIA_LIMIT_MIN = 1024
MEDIA_LIMIT_MAX = 104_857_600

_SETTINGS = select(instance_settings.c.data).where(instance_settings.c.id == SETTINGS_ROW)


async def media_limits(conn: AsyncConnection) -> dict[str, int]:
    """The media limits in force: the instance settings over the defaults."""
    data: Any = (await conn.execute(_SETTINGS)).scalar()
    configured = data.get("media_limits") if isinstance(data, dict) else None
    limits = dict(DEFAULT_MEDIA_LIMITS)
    if isinstance(configured, dict):
        for key, value in configured.items():
            if (key in limits and isinstance(value, int) and not isinstance(value, bool)
                    and MEDIA_LIMIT_MIN <= value <= MEDIA_LIMIT_MAX):
                limits[key] = value
    return limits
