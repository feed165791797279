"""Migration 0026 (docs/mentions.md): the mention tables are filled from the messages there are
by the rules of a sent message, in batches, once; a second run repeats nothing, and rows go with their message.
Runs on a fresh SQLite file and, with TEST_DATABASE_URL, on a fresh PostgreSQL database."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import column, insert, select, table, text
from sqlalchemy.ext.asyncio import AsyncEngine

from meadhall.db.engine import create_engine
from meadhall.db.migrate import migrate
from meadhall.db.schema import messages
from meadhall.db.schema.messages import everyone_mentions, user_mentions
from tests.support.migrations import BACKENDS, empty_database, upgrade_to

ROOM = 7
MANY = 2_100  # more than one batch of the migration


@pytest.fixture(params=BACKENDS)
def fresh_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with empty_database(request.param, tmp_path) as url:
        yield url


@pytest.fixture
async def engine(fresh_url: str) -> AsyncIterator[AsyncEngine]:
    eng = create_engine(fresh_url)
    try:
        yield eng
    finally:
        await eng.dispose()


def user(user_id: int) -> dict[str, Any]:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return {"id": user_id, "username": f"u{user_id}", "username_norm": f"u{user_id}", "email_enc": b"x",
            "email_index": f"e{user_id}", "password_hash": "x", "display_name": f"U{user_id}",
            "display_name_norm": f"u{user_id}", "last_seen_at": now, "created_at": now, "bio": "", "status": "online",
            "locale": "en", "timezone": "UTC", "totp_enabled": False, "is_instance_admin": False,
            "password_reset_required": False}


# `users` as it was at revision 0025: the schema module's table has columns added since (a later migration's).
USERS_0025 = table("users", *(column(name) for name in user(0)))


def message(message_id: int, author_id: int | None, mentions: list[int], *, kind: str = "normal",
            recipient_id: int | None = None, everyone: bool = False) -> dict[str, Any]:
    return {"id": message_id, "channel_id": ROOM, "guild_id": None, "author_id": author_id, "content": "hi",
            "content_norm": "hi", "kind": kind, "recipient_id": recipient_id, "mentions": [str(m) for m in mentions],
            "mention_channels": [], "mention_everyone": everyone, "suppress_embeds": False, "pinned": False,
            "created_at": datetime(2026, 1, 1, tzinfo=UTC)}


async def mention_tables(engine: AsyncEngine) -> tuple[set[tuple[int, int, int]], set[tuple[int, int, int | None]]]:
    async with engine.connect() as conn:
        named = {tuple(r) for r in await conn.execute(select(user_mentions))}
        everyone = {tuple(r) for r in await conn.execute(select(everyone_mentions))}
    return named, everyone  # type: ignore[return-value]


async def test_0026_fills_the_mention_tables_from_existing_messages_once(engine: AsyncEngine) -> None:
    await upgrade_to(engine, "0025_cli_outbox")
    async with engine.begin() as conn:
        await conn.execute(insert(USERS_0025), [user(1), user(2), user(3)])
        await conn.execute(text("INSERT INTO channels (id, type, position, slowmode_seconds, created_at) "
                                "VALUES (:id, 'text', 0, 0, '2026-01-01')"), {"id": ROOM})
        await conn.execute(insert(messages), [
            message(100, 1, [2, 3, 1, 999, 2]),  # not the author, not an unknown user, once each
            message(101, 1, [2, 3], kind="private", recipient_id=2),  # only the recipient
            message(102, 1, [2], everyone=True),  # one row for the room
            message(103, None, [2], kind="system"),
            message(104, None, [3]),  # a webhook's message
            message(105, 2, []),
        ])
        await conn.execute(insert(messages), [message(1_000 + i, 2, [3]) for i in range(MANY)])

    assert "0026_mentions" in await migrate(engine)

    named, everyone = await mention_tables(engine)
    many = {(3, ROOM, 1_000 + i) for i in range(MANY)}
    assert named == {(2, ROOM, 100), (3, ROOM, 100), (2, ROOM, 101), (3, ROOM, 104)} | many
    assert everyone == {(ROOM, 102, 1)}

    # Run again over tables that are there (no version recorded past 0025): nothing is repeated.
    async with engine.begin() as conn:
        await conn.execute(text("UPDATE alembic_version SET version_num = '0025_cli_outbox'"))
    await upgrade_to(engine, "0026_mentions")
    assert await mention_tables(engine) == (named, everyone)

    # Rows go with their message (a cascade, on SQLite too).
    async with engine.begin() as conn:
        await conn.execute(text("DELETE FROM messages WHERE id IN (100, 102)"))
    named_after, everyone_after = await mention_tables(engine)
    assert named_after == named - {(2, ROOM, 100), (3, ROOM, 100)} and everyone_after == set()
