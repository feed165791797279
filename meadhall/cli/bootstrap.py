"""`meadhall bootstrap-admin`: first-time setup (docs/operations.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from meadhall.cli.settings import DataDir
from meadhall.cli.users import with_runtime
from meadhall.guilds.bootstrap import DEFAULT_GUILD_NAME, bootstrap_admin
from meadhall.messages import setup as message_setup


def register(app: typer.Typer) -> None:
    @app.command("bootstrap-admin")
    def bootstrap(
        username: Annotated[str, typer.Option("--username", help="Administrator username")],
        email: Annotated[str, typer.Option("--email", help="Administrator email")],
        password: Annotated[str | None, typer.Option(help="Password (20 characters generated when omitted)")] = None,
        guild_name: Annotated[str, typer.Option("--guild-name", help="Name of the main server")] = DEFAULT_GUILD_NAME,
        data_dir: DataDir = None,
    ) -> None:
        """Create the instance administrator and the main server; does nothing when already set up."""
        message_setup.setup()  # the main server's first room gets its system message, as over the API
        with_runtime(data_dir, lambda rt: bootstrap_admin(rt, username, email, password, guild_name))
