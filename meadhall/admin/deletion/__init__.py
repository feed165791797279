"""Instance administration: deletion (docs/admin.md)."""
