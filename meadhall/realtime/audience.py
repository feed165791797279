"""Who may receive an event, as user ids (house rule 4). Domains add their audience functions here as
they arrive; each takes a connection and returns a sorted list of user ids."""

from __future__ import annotations


def only(user_id: int) -> list[int]:
    """Events about a user's own account (USER_UPDATE, SESSION_INVALIDATED, READ_STATE_UPDATE)."""
    return [user_id]
