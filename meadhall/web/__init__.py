"""Server-rendered pages outside /api/v1: the public invitation page (API.md 3.7.1)."""
