"""What relationships give the layers below them, registered when the app is built: the friends of a user
are the receivers of their presence (accounts/presence.py offers the slot; docs/social.md)."""

from __future__ import annotations

from meadhall.accounts.presence import on_friends_lookup
from meadhall.social.relationships.friends import friends_lookup


def register() -> None:
    on_friends_lookup(friends_lookup)
