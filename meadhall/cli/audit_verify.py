"""`meadhall audit-verify` (docs/operations.md)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Adds the command to the tool."""
