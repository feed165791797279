"""claim-imported: hand an imported author's history to a local account (docs/migrating.md)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Commands are added by the porting work in progress."""
