"""What guilds add to the hooks of accounts when the app is built (`create_app`): a change of a user's public
summary is announced to the members of every guild of the user (MEMBER_UPDATE, docs/reference/events.md), and
PRESENCE_UPDATE carries the user's friends-scope style, which guilds own (docs/customisation.md)."""

from __future__ import annotations

from meadhall.accounts import presence, profile
from meadhall.guilds.members.service import announce_profile_to_guilds
from meadhall.guilds.styles.views import friends_style_views


def setup() -> None:
    profile.public_change.add("guilds.members", announce_profile_to_guilds)
    presence.style_lookup.add("guilds.styles", friends_style_views)
