"""Server-rendered pages outside /api/v1: the public invitation page (OpenAPI: invitePage)."""
