"""`meadhall backup DEST` and `meadhall restore SRC` (docs/operations.md): one JSON object on stdout, errors
as the envelope on stderr (docs/operations.md).

Neither applies pending migrations first, unlike the other commands: a backup is taken BEFORE an upgrade,
of the schema as it is, and a restore writes a whole database that the next start migrates."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from meadhall.cli.output import fail, run
from meadhall.cli.settings import DataDir, settings_for


async def _guarded(work: Any) -> dict[str, Any]:
    from meadhall.db.backup import BackupError
    from meadhall.db.migrate import SchemaTooNew

    try:
        return await work
    except BackupError as err:
        fail(err.code, err.message)
    except SchemaTooNew as err:
        fail("schema.too_new", str(err))
    raise AssertionError("not reached: fail() exits")


def register(app: typer.Typer) -> None:
    @app.command("backup")
    def backup_command(
        dest: Annotated[Path, typer.Argument(help="New or empty directory to write the backup into")],
        include_secret_key: Annotated[bool, typer.Option(
            "--include-secret-key",
            help="Also copy the secret key (keep such a backup as safe as the key itself)")] = False,
        data_dir: DataDir = None,
    ) -> None:
        """Back up the database (a consistent copy), the stored files and a manifest of sha256 sums."""
        from meadhall.db.backup import backup as do_backup

        run(lambda: _guarded(do_backup(settings_for(data_dir), dest, include_secret_key=include_secret_key)))

    @app.command("restore")
    def restore_command(
        src: Annotated[Path, typer.Argument(help="Directory written by `meadhall backup`")],
        force: Annotated[bool, typer.Option("--force", help="Replace a database or files that hold data")] = False,
        data_dir: DataDir = None,
    ) -> None:
        """Restore a backup into the configured database and DATA_DIR (stop the service first)."""
        from meadhall.db.backup import restore as do_restore

        run(lambda: _guarded(do_restore(settings_for(data_dir), src, force=force)))
