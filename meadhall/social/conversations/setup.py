"""What conversations plug into lower layers at start (called by `create_app`): the conversation as a
message room, and who may fetch a group icon."""

from __future__ import annotations

from meadhall.files.access import register_fetch_rule
from meadhall.social.conversations import rooms
from meadhall.social.conversations.group import check_fetch_icon


def register() -> None:
    rooms.register()
    register_fetch_rule("dm_icon", check_fetch_icon)  # files know no domain: conversations say who sees one
