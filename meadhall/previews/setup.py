"""What link previews add when the app is built (`create_app`): the job that deletes expired cache rows (docs/outbound.md)."""

from __future__ import annotations

from meadhall.previews.queries import delete_expired_previews
from meadhall.runtime import Runtime

EXPIRE_EVERY = 600.0  # seconds; an expired row is never served, the job only keeps the table small


def setup(rt: Runtime) -> None:
    async def expire() -> None:
        async with rt.uow() as uow:
            await delete_expired_previews(uow.conn, uow.now)

    rt.jobs.add("link-previews-expire", EXPIRE_EVERY, expire)
