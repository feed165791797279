"""`meadhall serve` on a database behind head migrates in a child process, `meadhall migrate` itself, so
that Alembic and Mako (some 11 MiB of modules, issue 35) never enter the serving process: a first start, a
fresh DATA_DIR, an upgrade. The child takes the same migration lock as any start (db/migrate.py), so nodes
starting together still migrate once: one child applies every revision, the others wait and find nothing.

The serving process's lifespan still calls the migration (Runtime.start), as create_app does in tests: after
the child it finds nothing pending and loads nothing. When the child fails, its output is set aside and that
in-process migration meets the same failure and reports it exactly as a start always has (uvicorn's
"Application startup failed", exit status 3): the child only moves the work, never the outcome."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import structlog

# The line Runtime.start logs when it applies migrations itself.
log = structlog.get_logger("meadhall.runtime")

# -P: the working directory is not put on the path (a stray file there must not shadow a module).
_MIGRATE = [sys.executable, "-P", "-c", "from meadhall.cli.main import main; main()", "migrate"]


def migrate_in_child(data_dir: Path | None) -> None:
    """Run `meadhall migrate` with this process's environment. A failure is left to the lifespan's own
    migration, which meets it again and reports it."""
    args = [*_MIGRATE, *(["--data-dir", str(data_dir)] if data_dir else [])]
    # This interpreter and fixed arguments: nothing from outside reaches the command line but DATA_DIR.
    done = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False)  # noqa: S603
    if done.returncode != 0:
        return
    try:
        applied = json.loads(done.stdout.splitlines()[-1])["applied"]
    except (IndexError, ValueError, KeyError, TypeError):  # not its JSON line: the lifespan migrates and reports
        return
    if applied:
        log.info("migrations applied", applied=applied)
