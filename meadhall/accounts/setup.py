"""What accounts add to the hooks of the layers below them when the app is built (`create_app`): presence
notices REST activity (auth's session refresh) and tells friends of public profile changes."""

from __future__ import annotations

from meadhall.accounts import presence, profile
from meadhall.auth import sessions


def setup() -> None:
    sessions.session_activity.add("accounts.presence", presence.note_session_activity)
    profile.public_change.add("accounts.presence", presence.announce_profile_to_friends)
