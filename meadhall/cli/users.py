"""User maintenance commands: create-user, reset-password, make-admin, remove-admin, totp-setup, totp-reset."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from meadhall.accounts import admin_ops
from meadhall.cli.output import fail, run
from meadhall.cli.settings import DataDir, settings_for
from meadhall.runtime import Runtime

Email = Annotated[str, typer.Option("--email", help="Account email")]


def with_runtime(data_dir: Path | None, action: Callable[[Runtime], Awaitable[dict[str, Any]]]) -> None:
    """Build the runtime (applying pending migrations), run one service call, print its JSON. Its events go
    to the outbox, which the serving processes publish to the open connections: this process has no way to
    their bus without Redis, and with Redis the outbox keeps them through an outage (docs/architecture.md,
    "CLI effects reach live connections")."""

    async def go() -> dict[str, Any]:
        rt = Runtime(settings_for(data_dir), outbox=True)
        try:
            await rt.start()
            return await action(rt)
        finally:
            await rt.close()

    run(go)


PasswordPrompt = Annotated[
    bool,
    typer.Option("--password-prompt",
                 help="Ask for the password (hidden, typed twice) instead of taking it as an argument, "
                      "where other users can read it; reads one line when standard input is not a terminal"),
]


def prompted_password() -> str:
    """A hidden prompt with confirmation on a terminal (on stderr: stdout carries only the JSON answer);
    the first line of standard input otherwise, for scripts."""
    if sys.stdin.isatty():
        return str(typer.prompt("Password", hide_input=True, confirmation_prompt=True, err=True))
    line = sys.stdin.readline().rstrip("\r\n")
    if not line:
        fail("validation.failed", "password: nothing read from standard input", exit_code=2)
    return line


def chosen_password(password: str | None, prompt: bool) -> str | None:
    """`--password P`; `--password -` or `--password-prompt` ask for it; None generates one."""
    if prompt or password == "-":  # noqa: S105 - "-" means "ask", not a password
        return prompted_password()
    return password


@contextmanager
def progress_bar(total: int, label: str) -> Iterator[Callable[[], None] | None]:
    """A progress bar on stderr when it is a terminal (never in logs or pipes); else no callback."""
    if total < 2 or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda: bar.advance(task)


def register(app: typer.Typer) -> None:
    @app.command("create-user")
    def create_user(
        username: Annotated[str | None, typer.Option(help="Single user: username")] = None,
        email: Annotated[str | None, typer.Option(help="Single user: email")] = None,
        password: Annotated[str | None, typer.Option(
            help="Single user: password (generated when omitted; '-' asks for it)")] = None,
        password_prompt: PasswordPrompt = False,
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
        if count is not None and (password is not None or password_prompt):
            raise typer.BadParameter("bulk users get generated passwords: drop --password / --password-prompt")
        given = chosen_password(password, password_prompt) if single else None

        async def action(rt: Runtime) -> dict[str, Any]:
            if count is not None:
                specs = admin_ops.bulk_specs(rt, count, prefix)
            else:
                specs = [admin_ops.UserSpec(username or "", email or "", given)]
            with progress_bar(len(specs), "Hashing passwords") as progress:
                return await admin_ops.create_users(rt, specs, admin=admin, sessions_path=sessions,
                                                    progress=progress)

        with_runtime(data_dir, action)

    @app.command("reset-password")
    def reset_password(
        email: Email,
        password: Annotated[str | None, typer.Option(help="New password (generated when omitted; '-' asks for it)")
                            ] = None,
        password_prompt: PasswordPrompt = False,
        data_dir: DataDir = None,
    ) -> None:
        """Set a password and revoke all sessions of the account."""
        given = chosen_password(password, password_prompt)
        with_runtime(data_dir, lambda rt: admin_ops.reset_password(rt, email, given))

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
