"""What messages add to the hooks of lower layers when the app is built (`create_app`, and the CLI commands that
change guilds): who may fetch an attachment (files know no domain), guild changes reported as system messages
in the room, and a ban's deletion of the banned user's recent messages (messages/purge.py)."""

from __future__ import annotations

from meadhall.db.uow import UnitOfWork
from meadhall.files.access import fetch_rules
from meadhall.guilds.hooks import GuildNotice, guild_notice, member_purge
from meadhall.messages.attachments import check_fetch_attachment
from meadhall.messages.purge import do_purge_author
from meadhall.messages.system import post_system_message


async def post_notice(uow: UnitOfWork, notice: GuildNotice) -> None:
    await post_system_message(uow, guild_id=notice.guild_id, channel_id=notice.channel_id, type_=notice.type,
                              user_id=notice.user_id, display_name=notice.display_name, actor_id=notice.actor_id,
                              via=notice.via, viewers=notice.viewers)


def setup() -> None:
    fetch_rules.add("attachment", check_fetch_attachment)
    guild_notice.add("messages.system", post_notice)
    member_purge.add("messages.purge", do_purge_author)
