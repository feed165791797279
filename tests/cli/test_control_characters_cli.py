"""The CLI refuses control characters in the names it stores, like the API (docs/reference/errors.md), through the same
validators (meadhall.core.text): exit 1 with `validation.failed`, nothing written."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from meadhall.db.schema import guilds, users


async def counts(rt) -> tuple[int, int]:
    async with rt.engine.connect() as conn:
        return ((await conn.execute(select(func.count()).select_from(users))).scalar_one(),
                (await conn.execute(select(func.count()).select_from(guilds))).scalar_one())


@pytest.mark.parametrize("control", ["\x07", "\x1b"], ids=["bel", "esc"])
async def test_create_user_and_bootstrap_refuse_control_characters(cli, rt, control):
    before = await counts(rt)
    r = await cli("create-user", "--username", "bob", "--email", f"bob{control}@example.com")
    assert r.exit_code == 1 and r.error["code"] == "validation.failed", r.stderr
    r = await cli("bootstrap-admin", "--username", "root", "--email", "root@example.com",
                  "--guild-name", f"Town{control}Hall")
    assert r.exit_code == 1 and r.error["code"] == "validation.failed", r.stderr
    assert "guild_name" in r.error["message"]
    assert await counts(rt) == before
