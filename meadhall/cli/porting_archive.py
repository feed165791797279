"""export-guild and import-guild: a guild's self-describing, checksummed archive (docs/migrating.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from sqlalchemy.exc import SQLAlchemyError

from meadhall.cli.output import fail
from meadhall.cli.settings import DataDir
from meadhall.cli.users import with_runtime
from meadhall.core.ids import parse_id
from meadhall.porting.archive.format import ArchiveError
from meadhall.runtime import Runtime


async def _guarded(work: Any, failed: str) -> dict[str, Any]:
    """The archive commands' own refusals (`export.exists`, `import.corrupt`, ...) in the CLI's error envelope;
    so are a disk or database failing part-way (`failed` says what that left behind)."""
    try:
        return dict(await work)
    except ArchiveError as err:
        fail(err.code, err.message)
    except (OSError, SQLAlchemyError) as err:
        fail("internal.error", f"{failed}: {type(err).__name__}: {err}".splitlines()[0])
    raise AssertionError("not reached: fail() exits")


def _guild_name(name: str) -> str:
    """`--name` follows the rule of every guild's name (OpenAPI: createGuild)."""
    from pydantic import TypeAdapter, ValidationError

    from meadhall.guilds.schemas import GuildName

    try:
        return str(TypeAdapter(GuildName).validate_python(name))
    except ValidationError as err:
        fail("validation.failed", f"--name: {err.errors()[0]['msg']}")
        raise AssertionError("not reached: fail() exits") from None


def register(app: typer.Typer) -> None:
    @app.command("export-guild")
    def export_guild_command(
        guild: Annotated[str, typer.Option("--guild", help="Id of the guild to export")],
        out: Annotated[Path, typer.Option("--out", help="New file to write the archive to (.tar.gz, mode 0600)")],
        data_dir: DataDir = None,
    ) -> None:
        """Write one guild as a checksummed archive (no direct conversations, no secrets)."""
        from meadhall.porting.archive.export import export_guild
        from meadhall.porting.progress import progress

        guild_id = parse_id(guild)
        if guild_id is None:
            raise typer.BadParameter("--guild takes a guild id")

        async def action(rt: Runtime) -> dict[str, Any]:
            with progress("Exporting messages") as bar:
                return await _guarded(export_guild(rt, guild_id, out.absolute(), progress=bar.advance,
                                                   total=bar.retotal), "the export failed; no archive was written")

        with_runtime(data_dir, action)

    @app.command("import-guild")
    def import_guild_command(
        src: Annotated[Path, typer.Argument(help="Archive written by export-guild")],
        owner_email: Annotated[str, typer.Option("--owner-email", help="Email of the account that will own the guild")],
        name: Annotated[str | None, typer.Option("--name", help="Name of the new guild (default: the archive's)")
                        ] = None,
        map_users: Annotated[Path | None, typer.Option(
            "--map-users", help="CSV of lines source_user_id,local_username: those users are these accounts")] = None,
        data_dir: DataDir = None,
    ) -> None:
        """Create a new guild from an archive: verified whole before anything is written; all or nothing."""
        from meadhall.porting.archive.restore import import_guild

        if name is not None:
            name = _guild_name(name)

        async def action(rt: Runtime) -> dict[str, Any]:
            return await _guarded(import_guild(rt, src, owner_email=owner_email, name=name, map_users=map_users),
                                  "the import failed; nothing was kept")

        with_runtime(data_dir, action)
