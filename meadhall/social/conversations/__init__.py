"""Direct conversations, one-to-one and group (docs/social.md)."""
