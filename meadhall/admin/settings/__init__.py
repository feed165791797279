"""Instance administration: settings (docs/admin.md)."""
