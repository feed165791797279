"""Numbered migrations (docs/architecture.md): shipped files never change, new ones extend one linear chain,
a second run applies nothing, 0002 drops the identity-link table, and creating tables tolerates them
existing. Runs on a fresh SQLite file and, with TEST_DATABASE_URL, on a fresh PostgreSQL database."""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import text, true
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from meadhall.core.ids import EPOCH_MS, id_timestamp_ms
from meadhall.db import dialect
from meadhall.db.engine import create_engine
from meadhall.db.migrate import MIGRATIONS_DIR, alembic_config, migrate, shipped_revisions
from tests.support.migrations import BACKENDS, empty_database, upgrade_to

VERSIONS_DIR = MIGRATIONS_DIR / "versions"

# sha256 of every shipped migration. A shipped migration is never rewritten (docs/architecture.md): add a
# new numbered file instead, and add its digest here once it ships.
# Issue 34 changed the imports of 0006, 0007, 0009, 0010, 0017, 0018, 0019, 0020, 0022 and 0023 (and their
# docstrings; 0017 wrote its audit hashes with core/clock.py, now with a frozen copy of the same rule):
# the statements they run moved from db/dialect.py into the frozen modules pinned below (unchanged, but
# for the id epoch written out in room_days_0020.py);
# tests/db/test_migration_sql.py shows that every revision emits the same SQL as before.
SHIPPED = {
    "0001_initial.py": "a8c84cf74660a0a3562b6f58fdf8a0ccd0e0a319bc6b5c5479aeb72a5fe34f38",
    "0002_drop_identity_links.py": "3ed536aec2dc5cd8588db2811059c9bf8e3dfd76810089fe1499bfa13e61dc5a",
    "0003_accounts.py": "08358cfab444db4afa7751a5b796d46cc0e2e310f79d691c412f061246657d1f",
    "0004_guilds.py": "0bc3ad9f3e33be89bddf6c4919ca625d0d735e05d9eef9ebe24abc29fecda0ce",
    "0005_messages.py": "59c144cd26a720657cfefed35199877da4a7c3984631af820c1708d700d162b8",
    "0006_message_search.py": "f91a6ec0079d3b536b31c62437e10e307bf3977d0007c0f6374ce1d5bdf8ffe9",
    "0007_guild_perm_version.py": "9d7b6c740700de1db33c9a0c198b4b0d57a5b04a50d05e71a65e582b0a4d86d9",
    # Issue 13 changed only 0008's docstring (it cited a file outside the repository); its code is unchanged.
    "0008_files.py": "897a1af8e3b4f6640a64da80735268c97c81886e23ec761305d7fad1b46957c0",
    "0009_auth_epoch.py": "14902264a60eb85a52df8933cd6d383fe504eac11a726704854080b442421e9b",
    "0010_message_flags.py": "eed7ebdfd55d2b582d0494ec18895b9f40555a25c706cd967036005a4fde4d5d",
    "0011_social.py": "5b5c0ed353687d27b1b7578cabbb452b9a54ae9f79ae8ab9797332333fd64ef5",
    "0012_customisation.py": "0e3e52afe846a6e9853aea626713b7aa3b4ffa6c374ddb27062ed07cb4f80cec",
    "0013_voice.py": "49782e317faeb0c40e4f2b087b7f6c452054a4b2734a80d04620319181c02d88",
    "0014_outbound.py": "9b1ea0d5d7144c2c4abdd224489e2f1caa7224308a2f5ca2397c9ddf90f99b7d",
    "0015_webhooks.py": "8650b44b66de0c9540acd5f8da24414ec21f6edf5f80a30d73acfb070dd94d96",
    "0016_passkeys.py": "fc48e90f0f34f9345d918c59a9ac87d16e1bacc91bcfe3a6fe46b4fad326f735",
    "0017_audit_chain.py": "3545df8f98e115fa31709152cb9e0592e8899d32a170a9084e281b3240766250",
    "0018_user_search.py": "d980d937883e0479d62e3c40bf10b38bc1b88e6d1927d5583eba1203d33197c2",
    "0019_user_search_short_parts.py": "faa96afb98d9561e47eefd79253de3fbf170f7b1532de98db0a2e45261bdedc9",
    "0020_room_days.py": "ddf08985169273c8ae297f785d4a6117d5dec505b011d988b9523e87142b1c76",
    "0021_relationships_by_type.py": "30462d4c2309f087d1fab0ba5d430b27a08f66d596362b0e2104c8d760745c76",
    "0022_relationship_stamps.py": "0d2cd0303b54711a4e21eda26473e1e08eb6e3a2ec3dea332d888180b12bb2c4",
    "0023_user_style_count.py": "97b38fb7c3ffba4b5d0fe74bd19aee3e2310b017c5dcc36c0a877ff779fd4172",
    "0024_push_subscription_sessions.py": "fa7c60c072810728fb293e09cff222c5c3a5eec62bde2a84ad8f550b88c33fca",
    "0025_cli_outbox.py": "7e297afea5d7e1e2c83cecfe594e9407ea565c532804c0099221e6665c09e4e9",
    "0026_mentions.py": "f4e4b6670f8aecad26d33cdc9c556ef13997ba6543e6494083cfa06241262cc9",
    "0027_audit_keyed_chain.py": "8a7c5022a403d7e274ab30919d5c23fc579cb45ea093e350146f63f8a430eccf",
    "0028_notification_settings.py": "2501800d9297e41d1725f845279e1b28fd1053d3826b59a5f31176733b4809d5",
    "0029_message_nonces.py": "8e14653c04eae9dafe360a81f9a9d4770a91ffecbe1d5a782646ad3434ed42ff",
    "0030_push_outbox.py": "8289b2c4d8c3303fd956a6e44c3d8224c348eaf834992e54bfbe3f25241ef818",
    "0031_imports.py": "77d151c1db79ffd3ae48e525b794f540d8a0e6458b3c504bb6bd39d97f24d96b",
}

# sha256 of every module of migrations/frozen/, the SQL that shipped revisions import: as unchangeable as
# the revisions. A new module is added here when its revision ships.
FROZEN_DIR = MIGRATIONS_DIR / "frozen"
FROZEN = {
    "__init__.py": "9b4eca5cbef799269eb4f031e44b1712c3ace420c38a2bc07b7134e1c9d19d12",
    "audit_time_0017.py": "13faf534ecbcca5922dd18e18f615f3d8312b493f07f09ec6b4476960734791d",
    "auth_epoch_0009.py": "76e29ec6f62cf42dc190c4cc464836aad501376adfdbb91eb510ee42ad59d0c5",
    "message_flags_0010.py": "1aa0b049e9542388f1347bbb834629647bc1d9f48bf8bc8609035f757b70697d",
    "message_search_0006.py": "76906aee60443f7765e91fed2198e85af5e55bbce09c856ed5bf2fd5c8348656",
    "perm_versions_0007.py": "9eb40a7fdf5d6ff393face68ed4f6d1c3faecbcc094f734aef8b5cec16b82638",
    "relationship_stamps_0022.py": "15bd115a7f349838f98d419f780ad0dc93721a0aa3b4e87797700b251a733557",
    "room_days_0020.py": "7acc6b466be7c453a0eb02ceab38411218c513d8fe8911df6562a82473d959c5",
    "style_counts_0023.py": "5c693df75ea0140e538b9f6cbc51cb7825005f52ee71852c64f5beadec734e08",
    "user_grams_0019.py": "abe95dc17601cc3686640012e9d6c854459ce659199f9e855a62f7b468b4d272",
    "user_search_0018.py": "bee3dd7b207cb717628d48762bd63f53b792ad3c2f7cac3126b7cb800dab899f",
}

FILE_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.py$")


def migration_files() -> list[Path]:
    return sorted(p for p in VERSIONS_DIR.glob("*.py") if p.name != "__init__.py")


# ---- the files ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_migration_is_unchanged(name: str) -> None:
    path = VERSIONS_DIR / name
    assert path.is_file(), f"shipped migration {name} disappeared"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert digest == SHIPPED[name], f"shipped migration {name} was rewritten; add a new migration instead"


@pytest.mark.parametrize("name", sorted(FROZEN))
def test_frozen_migration_sql_is_unchanged(name: str) -> None:
    path = FROZEN_DIR / name
    assert path.is_file(), f"frozen module {name} disappeared"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert digest == FROZEN[name], f"frozen module {name} was rewritten; add a new migration and module instead"


def test_revisions_import_nothing_of_meadhall_but_frozen_modules() -> None:
    """What a revision runs must not follow code that keeps changing: only meadhall.db.migrations.frozen."""
    found = {}
    for path in migration_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            for name in names:
                if name.split(".")[0] == "meadhall" and not name.startswith("meadhall.db.migrations.frozen"):
                    found.setdefault(path.name, []).append(name)
    assert not found, f"revisions importing living code (freeze it under db/migrations/frozen/): {found}"


def test_every_frozen_module_is_pinned() -> None:
    found = sorted(p.name for p in FROZEN_DIR.glob("*.py"))
    assert found == sorted(FROZEN), "add the digest of a new frozen module to FROZEN once its revision ships"


def test_migration_files_are_numbered_consecutively() -> None:
    names = [p.name for p in migration_files()]
    bad = [n for n in names if not FILE_NAME.match(n)]
    assert not bad, f"migration files must be named NNNN_name.py: {bad}"
    numbers = [int(FILE_NAME.match(n).group(1)) for n in names]  # type: ignore[union-attr]
    assert numbers == list(range(1, len(names) + 1)), f"numbers must run 0001, 0002, ... without gaps: {names}"
    assert set(SHIPPED) <= set(names)


def test_revision_ids_equal_file_stems_and_form_one_linear_chain() -> None:
    script = ScriptDirectory.from_config(alembic_config())
    by_stem = {Path(s.path).stem: s for s in script.walk_revisions()}
    stems = [p.stem for p in migration_files()]
    assert sorted(by_stem) == stems, "every file in versions/ must be a revision, and nothing else"
    previous = None
    for stem in stems:
        rev = by_stem[stem]
        assert rev.revision == stem, f"{stem}: revision id must equal the file name"
        assert rev.down_revision == previous, f"{stem}: down_revision must be {previous!r}"
        assert not rev.branch_labels and not rev.dependencies, f"{stem}: no branches or dependencies"
        previous = stem
    assert list(script.get_heads()) == [stems[-1]]
    assert shipped_revisions() == stems


def test_created_tables_tolerate_existing_ones() -> None:
    """House rule: `op.create_table(..., if_not_exists=True)` in every migration."""
    offenders = []
    for path in migration_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "create_table"
            ):
                flag = next((k.value for k in node.keywords if k.arg == "if_not_exists"), None)
                if not (isinstance(flag, ast.Constant) and flag.value is True):
                    offenders.append(f"{path.name}:{node.lineno}")
    assert not offenders, f"create_table without if_not_exists=True: {offenders}"


# ---- running them ------------------------------------------------------------------------------------


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


async def versions(engine: AsyncEngine) -> list[str]:
    async with engine.connect() as conn:
        return [r[0] for r in await conn.execute(text("SELECT version_num FROM alembic_version"))]


async def tables(engine: AsyncEngine) -> list[str]:
    async with engine.connect() as conn:
        return await dialect.list_tables(conn)


async def test_migrate_applies_every_revision_once_then_nothing(engine: AsyncEngine) -> None:
    revisions = shipped_revisions()
    assert await tables(engine) == []

    assert await migrate(engine) == revisions
    assert await versions(engine) == [revisions[-1]]
    after_first = await tables(engine)
    assert {"alembic_version", "audit_log", "instance_settings"} <= set(after_first)

    assert await migrate(engine) == []
    assert await versions(engine) == [revisions[-1]]
    assert await tables(engine) == after_first


async def test_0002_drops_an_existing_identity_link_table(engine: AsyncEngine) -> None:
    await upgrade_to(engine, "0001_initial")
    assert await versions(engine) == ["0001_initial"]
    async with engine.begin() as conn:
        await conn.execute(text(
            "CREATE TABLE user_identity_links (id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, "
            "provider VARCHAR(32) NOT NULL, subject VARCHAR(255) NOT NULL)"
        ))
        await conn.execute(text(
            "INSERT INTO user_identity_links (id, user_id, provider, subject) VALUES (1, 1, 'github', 'x')"
        ))
    assert "user_identity_links" in await tables(engine)

    applied = await migrate(engine)

    assert applied == shipped_revisions()[1:]
    assert applied[0] == "0002_drop_identity_links"
    assert "user_identity_links" not in await tables(engine)


async def test_0002_is_a_no_op_without_the_table(engine: AsyncEngine) -> None:
    await upgrade_to(engine, "0001_initial")
    before = set(await tables(engine))
    assert "user_identity_links" not in before

    await upgrade_to(engine, "0002_drop_identity_links")

    assert await versions(engine) == ["0002_drop_identity_links"]
    assert set(await tables(engine)) == before


async def test_0001_tolerates_its_tables_already_existing(engine: AsyncEngine) -> None:
    """Tables (and indexes) present but no version recorded, e.g. created by hand: 0001 still applies."""
    await upgrade_to(engine, "0001_initial")
    async with engine.begin() as conn:
        await conn.execute(text("DELETE FROM alembic_version"))
    before = set(await tables(engine))

    await upgrade_to(engine, "0001_initial")

    assert await versions(engine) == ["0001_initial"]
    assert set(await tables(engine)) == before


async def test_0010_flags_existing_reactions_and_attachments_and_keeps_search(engine: AsyncEngine) -> None:
    """Messages with reactions or files before 0010 are flagged by it; the table keeps its search
    triggers (a rebuilt table would lose them, and new messages would not be found)."""
    await upgrade_to(engine, "0009_auth_epoch")
    columns = ("id, channel_id, content, content_norm, kind, mentions, mention_channels, mention_everyone, "
               "suppress_embeds, pinned, created_at")
    async with engine.begin() as conn:
        await conn.execute(text("INSERT INTO channels (id, type, position, slowmode_seconds, created_at) "
                                "VALUES (7, 'text', 0, 0, '2026-01-01')"))
        for message_id in (10, 11, 12):
            await conn.execute(text(
                f"INSERT INTO messages ({columns}) VALUES ({message_id}, 7, 'hi', 'hi', 'default', '[]', '[]', "  # noqa: S608
                "false, false, false, '2026-01-01')"))
        await conn.execute(text("INSERT INTO reactions (message_id, emoji, user_id, created_at) "
                                "VALUES (10, 'x', 1, '2026-01-01')"))
        await conn.execute(text("INSERT INTO files (id, purpose, original_name, content_type, size, sha256, "
                                "meta, message_id, created_at) VALUES (20, 'attachment', 'a', 'text/plain', "
                                "1, 'd', '{}', 11, '2026-01-01')"))

    # 0010 runs first; the later revisions must keep what it did (the checks below run after all of them).
    assert (await migrate(engine))[:1] == ["0010_message_flags"]

    async with engine.begin() as conn:
        flags = {r[0]: (bool(r[1]), bool(r[2])) for r in await conn.execute(
            text("SELECT id, reacted, has_attachments FROM messages ORDER BY id"))}
        assert flags == {10: (True, False), 11: (False, True), 12: (False, False)}
        # New rows are flagged by the triggers.
        await conn.execute(text("INSERT INTO reactions (message_id, emoji, user_id, created_at) "
                                "VALUES (12, 'y', 1, '2026-01-01')"))
        assert (await conn.execute(text("SELECT reacted FROM messages WHERE id = 12"))).scalar() in (True, 1)
        await conn.execute(text(
            f"INSERT INTO messages ({columns}) VALUES (13, 7, 'findable words', 'findable words', 'default', "  # noqa: S608
            "'[]', '[]', false, false, false, '2026-01-01')"))
        found = await dialect.select_messages_containing(conn, 7, ["findable"], visible=true(), before=None,
                                                         limit=10)
    assert [r["id"] for r in found] == [13]


async def room_days_of(conn: AsyncConnection) -> dict[tuple[int, int], int]:
    """room_days, rows of 0 aside."""
    rows = await conn.execute(text("SELECT channel_id, day, messages FROM room_days WHERE messages <> 0"))
    return {(r[0], r[1]): r[2] for r in rows}


async def messages_per_room_day(conn: AsyncConnection) -> dict[tuple[int, int], int]:
    """The same counts made from the messages, the day of each id worked out in Python."""
    counts: dict[tuple[int, int], int] = {}
    for channel_id, message_id in await conn.execute(text("SELECT channel_id, id FROM messages")):
        day = (datetime.fromtimestamp(id_timestamp_ms(message_id) / 1000, UTC).date() - date(1970, 1, 1)).days
        counts[(channel_id, day)] = counts.get((channel_id, day), 0) + 1
    return counts


async def test_0020_counts_existing_messages_per_room_and_day_then_keeps_counting(engine: AsyncEngine) -> None:
    """0020 fills room_days from the messages there are (ids on both sides of a UTC midnight); its triggers
    then follow inserts, a delete of several rows in one statement, and a room's deletion (its messages and
    its rows go by cascade, on SQLite too)."""
    await upgrade_to(engine, "0019_user_search_short_parts")
    columns = ("id, channel_id, content, content_norm, kind, mentions, mention_channels, mention_everyone, "
               "suppress_embeds, pinned, created_at")
    midnight = int(datetime(2026, 3, 1, tzinfo=UTC).timestamp() * 1000)

    async def write(conn: AsyncConnection, channel_id: int, offsets_ms: list[int], seq: int) -> list[int]:
        made = [((midnight + offset - EPOCH_MS) << 22) | seq + i for i, offset in enumerate(offsets_ms)]
        for message_id in made:
            await conn.execute(text(
                f"INSERT INTO messages ({columns}) VALUES (:id, :room, 'hi', 'hi', 'default', '[]', '[]', "  # noqa: S608
                "false, false, false, '2026-03-01')"), {"id": message_id, "room": channel_id})
        return made

    async with engine.begin() as conn:
        for room in (7, 8):
            await conn.execute(text("INSERT INTO channels (id, type, position, slowmode_seconds, created_at) "
                                    "VALUES (:id, 'text', 0, 0, '2026-01-01')"), {"id": room})
        await write(conn, 7, [-1, -2, 0, 1, 86_400_000 * 3], 0)
        await write(conn, 8, [-86_400_000 * 40, 5], 10)

    assert (await migrate(engine))[:1] == ["0020_room_days"]

    async with engine.begin() as conn:
        before = await room_days_of(conn)
        assert before == await messages_per_room_day(conn)
        first_day = (date(2026, 3, 1) - date(1970, 1, 1)).days
        assert before[(7, first_day - 1)] == 2 and before[(7, first_day)] == 2 and len(before) == 5
        added = await write(conn, 7, [-3, 2, 86_400_000], 20)
        await write(conn, 8, [6], 30)
        assert await room_days_of(conn) == await messages_per_room_day(conn)
        await conn.execute(text("DELETE FROM messages WHERE id IN (:a, :b)"), {"a": added[0], "b": added[2]})
        assert await room_days_of(conn) == await messages_per_room_day(conn)
        await conn.execute(text("DELETE FROM channels WHERE id = 8"))
        assert await room_days_of(conn) == await messages_per_room_day(conn)
        rows_left = await conn.execute(text("SELECT count(*) FROM room_days WHERE channel_id = 8"))
        assert rows_left.scalar_one() == 0
