"""import-discord: a community's history from DiscordChatExporter JSON exports (docs/migrating.md)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Commands are added by the porting work in progress."""
