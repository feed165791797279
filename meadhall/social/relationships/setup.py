"""What relationships give the layers below them when the app is built (`create_app`): the friends of a user
are the receivers of their presence (accounts/presence.py offers the `friends_lookup` hook; docs/social.md)."""

from __future__ import annotations

from meadhall.accounts import presence
from meadhall.social.relationships.friends import friends_lookup


def setup() -> None:
    presence.friends_lookup.add("social.relationships", friends_lookup)
