"""`meadhall vapid-keys` (docs/push.md): a new Web Push key pair, printed and written nowhere."""

from __future__ import annotations

import typer

from meadhall.cli.output import emit


def register(app: typer.Typer) -> None:
    @app.command("vapid-keys")
    def vapid_keys() -> None:
        """Generate a P-256 key pair for Web Push; set VAPID_PRIVATE_KEY to the printed `env` line."""
        from meadhall.push.keys import generate_keys

        emit(generate_keys())
