"""Instance administration: audit (docs/admin.md)."""
