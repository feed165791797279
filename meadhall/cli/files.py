"""File maintenance: `meadhall orphan-files` (docs/operations.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from meadhall.cli.settings import DataDir
from meadhall.cli.users import with_runtime
from meadhall.files.cleanup import ORPHAN_HOURS, orphan_files


def register(app: typer.Typer) -> None:
    @app.command("orphan-files")
    def orphan_files_command(
        older_than_hours: Annotated[float, typer.Option("--older-than-hours", min=0,
                                                        help="Only files created more than H hours ago")] = ORPHAN_HOURS,
        delete: Annotated[bool, typer.Option("--delete", help="Delete them (default: only list)")] = False,
        data_dir: DataDir = None,
    ) -> None:
        """List unbound orphan files (uploads never sent, files whose holder is gone, content without a
        record); delete them with --delete."""
        with_runtime(data_dir, lambda rt: orphan_files(rt, older_than_hours=older_than_hours, remove=delete))
