"""Size limits of uploads: `MAX_UPLOAD_SIZE` for attachments, the media limits of the instance settings
for images (docs/reference/limits.md). The instance settings row (id 1, `data.media_limits`) is written by instance
administration; until a value is set the defaults of 5.3 apply, and a value out of range is ignored."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.core.limits import DEFAULT_MEDIA_LIMITS
from meadhall.files.queries import select_instance_settings_data, upsert_instance_settings_data

MEDIA_LIMIT_MIN = 1024
MEDIA_LIMIT_MAX = 104_857_600


async def media_limits(conn: AsyncConnection) -> dict[str, int]:
    """The media limits in force: the instance settings over the defaults."""
    data = await select_instance_settings_data(conn)
    configured = data.get("media_limits") if isinstance(data, dict) else None
    limits = dict(DEFAULT_MEDIA_LIMITS)
    if isinstance(configured, dict):
        for key, value in configured.items():
            if (key in limits and isinstance(value, int) and not isinstance(value, bool)
                    and MEDIA_LIMIT_MIN <= value <= MEDIA_LIMIT_MAX):
                limits[key] = value
    return limits


async def write_media_limits(conn: AsyncConnection, limits: dict[str, int], now: datetime) -> None:
    """Store the media limits in force (all five) in the settings row, created on first write. Every node
    reads the row on each upload and each GET /meta, so a change holds everywhere at once (no cache). The
    caller serialises writers (instance administration holds a transaction lock from its read to here)."""
    data = await select_instance_settings_data(conn)
    merged = {**(data if isinstance(data, dict) else {}), "media_limits": dict(limits)}
    await upsert_instance_settings_data(conn, merged, now)
