"""SQL of `claim-imported` (porting/claim.py): every row that names an imported author handed to a local
account, in the caller's transaction. Rows whose key the local account already holds (a reaction both made,
a membership of a guild both are in, a read mark of one room) are merged into the account's own instead of
moved, so that no unique key can fail the claim. Never commits."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import (
    BigInteger,
    RowMapping,
    and_,
    bindparam,
    delete,
    exists,
    insert,
    literal,
    or_,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.db.schema import (
    emojis,
    files,
    guild_bans,
    guilds,
    import_links,
    member_roles,
    members,
    messages,
    permission_overrides,
    reactions,
    read_states,
    sounds,
    users,
    webhooks,
)
from meadhall.db.schema.messages import everyone_mentions, message_nonces, user_mentions


async def select_user_locked(conn: AsyncConnection, user_id: int) -> RowMapping | None:
    """The account row, locked until the transaction ends: two claims of one author cannot both move it."""
    stmt = select(users).where(users.c.id == user_id).with_for_update()
    return (await conn.execute(stmt)).mappings().first()


async def move_messages(conn: AsyncConnection, author: int, target: int) -> int:
    """The author's messages (and the `@everyone` rows they wrote) become the target's; how many messages.
    A mention of the target in one of them goes: nobody is told of their own messages."""
    written = select(messages.c.id).where(messages.c.author_id == author).scalar_subquery()
    await conn.execute(delete(user_mentions).where(user_mentions.c.user_id == target,
                                                   user_mentions.c.message_id.in_(written)))
    moved = (await conn.execute(update(messages).where(messages.c.author_id == author)
                                .values(author_id=target))).rowcount
    await conn.execute(update(messages).where(messages.c.recipient_id == author).values(recipient_id=target))
    await conn.execute(update(everyone_mentions).where(everyone_mentions.c.author_id == author)
                       .values(author_id=target))
    await conn.execute(delete(message_nonces).where(message_nonces.c.author_id == author))
    return int(moved)


async def move_mentions(conn: AsyncConnection, author: int, target: int) -> None:
    """Messages naming the author name the target: their `<@id>` tokens, their `mentions` and the mention
    rows unread counts are made of (the target's own messages never mention their author)."""
    named = select(user_mentions.c.message_id).where(user_mentions.c.user_id == author).scalar_subquery()
    rows = (await conn.execute(select(messages.c.id, messages.c.content, messages.c.content_norm,
                                      messages.c.mentions).where(messages.c.id.in_(named)))).mappings().all()
    await _rename_in(conn, rows, author, target)
    theirs = user_mentions.alias("theirs")
    named_twice = exists(select(theirs.c.user_id).where(theirs.c.user_id == target,
                                                        theirs.c.message_id == user_mentions.c.message_id))
    own_message = exists(select(messages.c.id).where(messages.c.id == user_mentions.c.message_id,
                                                     messages.c.author_id == target))
    await conn.execute(delete(user_mentions).where(user_mentions.c.user_id == author, or_(named_twice, own_message)))
    await conn.execute(update(user_mentions).where(user_mentions.c.user_id == author).values(user_id=target))


async def move_own_mentions(conn: AsyncConnection, author: int, target: int) -> None:
    """The author's own messages naming the author (no mention row: nobody is told of their own message) name
    the target; call after `move_messages`."""
    old = f"<@{author}>"
    rows = (await conn.execute(select(messages.c.id, messages.c.content, messages.c.content_norm, messages.c.mentions)
                               .where(messages.c.author_id == target, messages.c.content.contains(old, autoescape=True))
                               )).mappings().all()
    await _rename_in(conn, rows, author, target)


async def _rename_in(conn: AsyncConnection, rows: Sequence[RowMapping], author: int, target: int) -> None:
    old, new = f"<@{author}>", f"<@{target}>"
    changed = [{"message_id": r["id"], "content": r["content"].replace(old, new),
                "content_norm": r["content_norm"].replace(old, new),
                "mentions": [str(target) if str(m) == str(author) else str(m) for m in r["mentions"] or ()]}
               for r in rows]
    if changed:
        await conn.execute(update(messages).where(messages.c.id == bindparam("message_id"))
                           .values(content=bindparam("content"), content_norm=bindparam("content_norm"),
                                   mentions=bindparam("mentions")), changed)


async def move_system_events(conn: AsyncConnection, author: int, target: int, guild_ids: list[int]) -> None:
    """System messages of the author's guilds that name the author (a join, a kick...) name the target."""
    if not guild_ids:
        return
    rows = (await conn.execute(select(messages.c.id, messages.c.system_event).where(
        messages.c.guild_id.in_(guild_ids), messages.c.kind == "system"))).mappings().all()
    mine, theirs = str(author), str(target)
    changed = []
    for r in rows:
        event = dict(r["system_event"] or {})
        if mine in (event.get("user_id"), event.get("actor_id")):
            event.update({k: theirs for k in ("user_id", "actor_id") if event.get(k) == mine})
            changed.append({"message_id": r["id"], "system_event": event})
    if changed:
        await conn.execute(update(messages).where(messages.c.id == bindparam("message_id"))
                           .values(system_event=bindparam("system_event")), changed)


async def move_member_overrides(conn: AsyncConnection, author: int, target: int) -> None:
    """Per-member permission overrides of the author become the target's where the target has none."""
    theirs = permission_overrides.alias("theirs")
    await conn.execute(delete(permission_overrides).where(
        permission_overrides.c.target_id == author, permission_overrides.c.kind == "member",
        exists(select(theirs.c.target_id).where(theirs.c.channel_id == permission_overrides.c.channel_id,
                                                theirs.c.target_id == target))))
    await conn.execute(update(permission_overrides).where(permission_overrides.c.target_id == author,
                                                          permission_overrides.c.kind == "member")
                       .values(target_id=target))


async def select_banned_guild_ids(conn: AsyncConnection, user_id: int) -> set[int]:
    return set((await conn.execute(select(guild_bans.c.guild_id).where(guild_bans.c.user_id == user_id))).scalars())


async def move_reactions(conn: AsyncConnection, author: int, target: int) -> int:
    """The author's reactions become the target's; one both made stays once. How many were the author's."""
    theirs = reactions.alias("theirs")
    both = exists(select(theirs.c.user_id).where(
        theirs.c.message_id == reactions.c.message_id, theirs.c.emoji == reactions.c.emoji,
        theirs.c.user_id == target))
    merged = (await conn.execute(delete(reactions).where(reactions.c.user_id == author, both))).rowcount
    moved = (await conn.execute(update(reactions).where(reactions.c.user_id == author)
                                .values(user_id=target))).rowcount
    return int(merged) + int(moved)


async def select_guild_ids(conn: AsyncConnection, user_id: int) -> list[int]:
    stmt = select(members.c.guild_id).where(members.c.user_id == user_id).order_by(members.c.guild_id)
    return list((await conn.execute(stmt)).scalars())


async def move_memberships(conn: AsyncConnection, author: int, target: int, joined: list[int],
                           merged: list[int], left: Sequence[int] = ()) -> None:
    """Memberships of `joined` guilds become the target's (nickname, join time, timeout kept); in `merged`
    guilds the target keeps their own membership and gains the author's roles. Written as new rows, then
    the author's removed: the role rows hang on the membership's key (and the permission cache is told by
    the triggers on inserts and deletes)."""
    if joined:
        copied = select(members.c.guild_id, literal(target, BigInteger), members.c.nick,
                        members.c.nick_norm, members.c.joined_at, members.c.timeout_until
                        ).where(members.c.user_id == author, members.c.guild_id.in_(joined))
        await conn.execute(insert(members).from_select(
            ["guild_id", "user_id", "nick", "nick_norm", "joined_at", "timeout_until"], copied))
    held = member_roles.alias("held")
    missing = select(member_roles.c.guild_id, literal(target, BigInteger),
                     member_roles.c.role_id).where(member_roles.c.user_id == author,
                                                   member_roles.c.guild_id.in_([*joined, *merged]), ~exists(
                         select(held.c.role_id).where(held.c.guild_id == member_roles.c.guild_id,
                                                      held.c.user_id == target,
                                                      held.c.role_id == member_roles.c.role_id)))
    await conn.execute(insert(member_roles).from_select(["guild_id", "user_id", "role_id"], missing))
    await conn.execute(delete(members).where(members.c.user_id == author))
    if merged or left:  # one member fewer where the person was one already, or is banned (`left`)
        await conn.execute(update(guilds).where(guilds.c.id.in_([*merged, *left]))
                           .values(member_count=guilds.c.member_count - 1))


async def move_bans(conn: AsyncConnection, author: int, target: int) -> None:
    """Bans the author made are the target's; a ban of the author moves to the target unless the target is
    banned there already or is a member there now (the guild admitted the person since)."""
    await conn.execute(update(guild_bans).where(guild_bans.c.author_id == author).values(author_id=target))
    theirs = guild_bans.alias("theirs")
    member_there = exists(select(members.c.user_id).where(members.c.guild_id == guild_bans.c.guild_id,
                                                          members.c.user_id == target))
    banned_there = exists(select(theirs.c.user_id).where(theirs.c.guild_id == guild_bans.c.guild_id,
                                                         theirs.c.user_id == target))
    await conn.execute(delete(guild_bans).where(guild_bans.c.user_id == author, or_(member_there, banned_there)))
    await conn.execute(update(guild_bans).where(guild_bans.c.user_id == author).values(user_id=target))


async def move_read_states(conn: AsyncConnection, author: int, target: int) -> None:
    """The author's read marks become the target's where the target has none."""
    theirs = read_states.alias("theirs")
    await conn.execute(delete(read_states).where(read_states.c.user_id == author, exists(
        select(theirs.c.user_id).where(theirs.c.user_id == target, theirs.c.channel_id == read_states.c.channel_id))))
    await conn.execute(update(read_states).where(read_states.c.user_id == author).values(user_id=target))


async def move_authorship(conn: AsyncConnection, author: int, target: int) -> None:
    """What the author made besides messages (files, emojis, sounds, webhooks, a guild it owned) and the
    import's record of which account the source's author is, so that a later import into the same guild
    (`--into`) finds the target."""
    await conn.execute(update(files).where(files.c.uploader_id == author).values(uploader_id=target))
    for table in (emojis, sounds, webhooks):
        await conn.execute(update(table).where(table.c.creator_id == author).values(creator_id=target))
    await conn.execute(update(guilds).where(guilds.c.owner_id == author).values(owner_id=target))
    await conn.execute(update(import_links).where(and_(import_links.c.kind == "user",
                                                       import_links.c.local_id == author))
                       .values(local_id=target))


async def delete_user(conn: AsyncConnection, user_id: int) -> None:
    """The account row; what still hangs on it (sessions, relationships, styles) goes by cascade."""
    await conn.execute(delete(users).where(users.c.id == user_id))
