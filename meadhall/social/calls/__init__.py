"""Calls in direct conversations (docs/social.md)."""
