"""A conversation as a message room (docs/social.md "Messages in conversations"): the ordinary message
operations work in it through `meadhall.messages.rooms`, which asks this resolver (its `conversation_room`
hook, filled by conversations/setup.py) when no guild room answers.

Every participant holds the same fixed set of permissions; nobody holds more. So there is no
`@everyone` (MENTION_EVERYONE), no slowmode to bypass, and nobody edits, deletes or removes reactions of
another's messages (MANAGE_MESSAGES); pinning is open to every participant (the pin rule of
conversations). The audience of an event is the participants (a `private` message: its two parties).
In a one-to-one conversation with a block between the two, sending, editing one's messages and typing
are refused (403 `relationship.blocked`: `check_send`, which the message operations ask) while history,
reactions, pins and read marks keep working; with a deleted account on the other side they are refused
with 403 `perm.denied` (docs/social.md "Blocks in a one-to-one conversation").
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.accounts.queries import select_users_by_ids
from meadhall.auth.sessions import Principal
from meadhall.core import permissions as perms
from meadhall.core.errors import permission_denied
from meadhall.guilds.rows import ChannelRow
from meadhall.messages.rooms import MessageRoom
from meadhall.social.blocks import check_not_blocked
from meadhall.social.conversations.access import Conversation, load_conversation

P = perms.P

PARTICIPANT_PERMISSIONS = int(
    P.VIEW_CHANNEL | P.SEND_MESSAGES | P.READ_MESSAGE_HISTORY | P.ADD_REACTIONS | P.ATTACH_FILES | P.EMBED_LINKS
    | P.USE_EXTERNAL_EMOJIS | P.SEND_PRIVATE_MESSAGES | P.SEND_SCREAMS
)


class ConversationRoom(MessageRoom):
    def __init__(self, conversation: Conversation, user_id: int) -> None:
        self.conversation, self.user_id = conversation, user_id

    @property
    def channel(self) -> ChannelRow:
        return self.conversation.channel

    @property
    def guild_id(self) -> int | None:
        return None

    @property
    def permissions(self) -> int:
        return PARTICIPANT_PERMISSIONS

    @property
    def is_instance_admin(self) -> bool:
        return False  # the administrator's bypass is for guilds; a conversation grants nobody more

    @property
    def caller(self) -> Mapping[str, Any] | None:
        return None

    def require(self, flag: perms.Permission) -> None:
        if not PARTICIPANT_PERMISSIONS & flag:
            raise permission_denied(flag.name, f"Missing permission {flag.name} in this conversation")

    async def viewers(self, conn: AsyncConnection, now: datetime) -> list[int]:
        return self.conversation.participant_ids

    async def check_send(self, conn: AsyncConnection) -> None:
        """Asked before a send, an edit and a typing indicator: in a conversation of two (a 1:1, or a group
        that shrank to two) neither writes to a deleted account or across a block."""
        ids = self.conversation.participant_ids
        if not self.conversation.is_group and len(ids) == 2:
            # A deleted account stays in its one-to-one conversations so that the other can still read
            # them (docs/admin.md "Soft deletion"); nobody can write to it any more.
            if any(u["deleted_at"] is not None for u in (await select_users_by_ids(conn, ids)).values()):
                raise permission_denied(None, "The other participant's account was deleted")
            await check_not_blocked(conn, ids[0], ids[1])


async def conversation_room(conn: AsyncConnection, principal: Principal, channel_id: int, now: datetime
                            ) -> MessageRoom | None:
    """The conversation as a room when the caller takes part in it (instance administrators included: the
    bypass never reveals conversations of others)."""
    del now
    found = await load_conversation(conn, channel_id)
    if found is None or not found.has(principal.user_id):
        return None
    return ConversationRoom(found, principal.user_id)
