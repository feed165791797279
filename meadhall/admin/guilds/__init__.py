"""Instance administration: guilds (docs/admin.md)."""
