"""Friend requests, friendships and blocks (docs/social.md)."""
