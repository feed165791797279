"""User maintenance commands: create-user, reset-password, make-admin, remove-admin, totp-setup, totp-reset."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from meadhall.accounts import admin_ops
from meadhall.cli.output import run
from meadhall.cli.settings import DataDir, settings_for
from meadhall.runtime import Runtime

Email = Annotated[str, typer.Option("--email", help="Account email")]


def with_runtime(data_dir: Path | None, action: Callable[[Runtime], Awaitable[dict[str, Any]]]) -> None:
    """Build the runtime (applying pending migrations), run one service call, print its JSON."""

    async def go() -> dict[str, Any]:
        rt = Runtime(settings_for(data_dir))
        try:
            await rt.start()
            return await action(rt)
        finally:
            await rt.close()

    run(go)


def register(app: typer.Typer) -> None:
    @app.command("create-user")
    def create_user(
        username: Annotated[str | None, typer.Option(help="Single user: username")] = None,
        email: Annotated[str | None, typer.Option(help="Single user: email")] = None,
        password: Annotated[str | None, typer.Option(help="Single user: password (generated when omitted)")] = None,
        admin: Annotated[bool, typer.Option("--admin", help="Single user: make an instance administrator")] = False,
        count: Annotated[int | None, typer.Option(help="Bulk: number of users <prefix>1..<prefix>N")] = None,
        prefix: Annotated[str, typer.Option(help="Bulk: username prefix")] = "user",
        sessions: Annotated[Path | None, typer.Option(help="Write one session per user as JSON lines (0600)")] = None,
        data_dir: DataDir = None,
    ) -> None:
        """Create users, also when registration is disabled. All or nothing."""
        single = username is not None or email is not None
        if single == (count is not None) or (single and not (username and email)):
            raise typer.BadParameter("give --username and --email, or --count [--prefix]")

        async def action(rt: Runtime) -> dict[str, Any]:
            if count is not None:
                specs = admin_ops.bulk_specs(rt, count, prefix)
            else:
                specs = [admin_ops.UserSpec(username or "", email or "", password)]
            return await admin_ops.create_users(rt, specs, admin=admin, sessions_path=sessions)

        with_runtime(data_dir, action)

    @app.command("reset-password")
    def reset_password(
        email: Email,
        password: Annotated[str | None, typer.Option(help="New password (generated when omitted)")] = None,
        data_dir: DataDir = None,
    ) -> None:
        """Set a password and revoke all sessions of the account."""
        with_runtime(data_dir, lambda rt: admin_ops.reset_password(rt, email, password))

    @app.command("make-admin")
    def make_admin(email: Email, data_dir: DataDir = None) -> None:
        """Grant instance administration."""
        with_runtime(data_dir, lambda rt: admin_ops.make_admin(rt, email))

    @app.command("remove-admin")
    def remove_admin(email: Email, data_dir: DataDir = None) -> None:
        """Remove instance administration (never from the last administrator)."""
        with_runtime(data_dir, lambda rt: admin_ops.remove_admin(rt, email))

    @app.command("totp-setup")
    def totp_setup(
        email: Email,
        force: Annotated[bool, typer.Option("--force", help="Replace an enabled second factor")] = False,
        data_dir: DataDir = None,
    ) -> None:
        """Enable TOTP with a new secret; prints the secret, the otpauth link and 8 backup codes."""
        with_runtime(data_dir, lambda rt: admin_ops.totp_setup(rt, email, force))

    @app.command("totp-reset")
    def totp_reset(email: Email, data_dir: DataDir = None) -> None:
        """Disable TOTP and delete the backup codes."""
        with_runtime(data_dir, lambda rt: admin_ops.totp_reset(rt, email))
