"""Storage: engine, schema, dialect, unit of work, migrations."""
