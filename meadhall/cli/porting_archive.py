"""export-guild and import-guild: a guild's self-describing, checksummed archive (docs/migrating.md)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Commands are added by the porting work in progress."""
