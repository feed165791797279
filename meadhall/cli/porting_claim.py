"""claim-imported: hand an imported author's history to a local account (docs/imported-authors.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from meadhall.cli.settings import DataDir
from meadhall.cli.users import Email, with_runtime


def register(app: typer.Typer) -> None:
    @app.command("claim-imported")
    def claim(
        user: Annotated[str, typer.Option("--user", help="Id of the imported author")],
        email: Email,
        data_dir: DataDir = None,
    ) -> None:
        """Move an imported author's messages, reactions, memberships and bans to the account with this
        email, then delete the imported author."""
        from meadhall.porting.claim import claim_imported

        with_runtime(data_dir, lambda rt: claim_imported(rt, user, email))
