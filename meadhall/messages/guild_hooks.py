"""The messages side of the guild hooks (`meadhall.guilds.hooks`): guild changes reported as system
messages, and a ban's deletion of the banned user's recent messages (messages/purge.py). Registered by
`create_app` and by the CLI commands that change guilds."""

from __future__ import annotations

from meadhall.db.uow import UnitOfWork
from meadhall.guilds.hooks import GuildNotice, on_guild_notice, on_member_purge
from meadhall.messages.purge import do_purge_author
from meadhall.messages.system import post_system_message


async def _post_notice(uow: UnitOfWork, notice: GuildNotice) -> None:
    await post_system_message(uow, guild_id=notice.guild_id, channel_id=notice.channel_id, type_=notice.type,
                              user_id=notice.user_id, display_name=notice.display_name, actor_id=notice.actor_id,
                              via=notice.via, viewers=notice.viewers)


def register() -> None:
    on_guild_notice("messages.system", _post_notice)
    on_member_purge("messages.purge", do_purge_author)
