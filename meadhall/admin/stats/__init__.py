"""Instance administration: stats (docs/admin.md)."""
