"""Pure building blocks: no framework, no database, no domain."""
