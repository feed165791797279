"""Clients of services outside Meadhall: the media server (LiveKit) today (docs/social.md, "Calls")."""
