"""Instance administration: users (docs/admin.md)."""
