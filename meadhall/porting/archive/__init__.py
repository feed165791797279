"""A guild's archive for moving between Meadhall instances (docs/migrating.md, "Between Meadhall instances"):
`export.py` writes it from one consistent read, `verify.py` checks all of it before `restore.py` writes a new
guild from it."""
