"""import-discord: a community's history from DiscordChatExporter JSON exports (docs/migrating.md)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

import typer
from sqlalchemy.exc import SQLAlchemyError

from meadhall.cli.output import emit, fail
from meadhall.cli.settings import DataDir, settings_for
from meadhall.config import ConfigError
from meadhall.core.errors import AppError


def register(app: typer.Typer) -> None:
    @app.command("import-discord")
    def import_discord_command(
        paths: Annotated[list[Path], typer.Argument(help="Export JSON files, or folders holding them and their "
                                                         "media folders")],
        owner_email: Annotated[str, typer.Option("--owner-email", help="Email of the account that will own the server")],
        name: Annotated[str | None, typer.Option("--name", help="Server name (default: the exports' server name)")] = None,
        map_users: Annotated[Path | None, typer.Option("--map-users", help="CSV of source_user_id,local_username "
                                                                            "lines: those authors are these accounts")] = None,
        into: Annotated[str | None, typer.Option("--into", help="Add to this server (imported before) instead of "
                                                               "creating one")] = None,
        data_dir: DataDir = None,
    ) -> None:
        """Import DiscordChatExporter JSON exports as one server, with imported authors."""
        from meadhall.porting.discord.importer import Options, import_discord
        from meadhall.porting.discord.reader import DiscordImportError
        from meadhall.runtime import Runtime

        into_id = None
        if into is not None:
            if not into.isdigit():
                fail("import.not_found", f"no server {into}")
            into_id = int(into)
        options = Options(paths, owner_email, name, map_users, into_id)

        async def go() -> dict[str, Any]:
            rt = Runtime(settings_for(data_dir), outbox=True)
            try:
                await rt.start()
                return await import_discord(rt, options)
            finally:
                await rt.close()

        try:
            result = asyncio.run(go())
        except DiscordImportError as err:
            fail(err.code, err.message)
        except AppError as err:
            fail(err.code, err.message)
        except ConfigError as err:
            fail("validation.failed", str(err))
        except (OSError, SQLAlchemyError) as err:  # a disk or the database failing part-way: undone (porting/transactions.py)
            fail("internal.error", f"the import failed and was undone: {type(err).__name__}: {err}".splitlines()[0])
        else:
            emit(result)
