"""`meadhall audit-verify` (docs/audit.md, docs/operations.md): walks every audit hash chain and reports
the first bad entry of each. Unlike the other commands, a finding is an answer, not a failure of the
command: the report goes to stdout as the one JSON object, and the exit code (1) tells scripts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from meadhall.cli.output import run
from meadhall.cli.settings import DataDir, settings_for

if TYPE_CHECKING:
    from meadhall.runtime import Runtime


async def audit_verify(rt: Runtime) -> dict[str, Any]:
    from meadhall.audit.chain import verify_chains
    from meadhall.db import dialect

    async with dialect.snapshot_read(rt.engine) as conn:
        return (await verify_chains(conn, rt.keys.audit_chain)).result()


def register(app: typer.Typer) -> None:
    @app.command("audit-verify")
    def audit_verify_command(data_dir: DataDir = None) -> None:
        """Verify the tamper-evident audit chains: recompute every entry's hash (keyed with SECRET_KEY since
        the keyed chain began, plain SHA-256 before) and link, compare the chain heads. Exit 0 when intact, 1 with the findings when an entry was changed or removed."""
        from meadhall.runtime import Runtime

        found: dict[str, Any] = {}

        async def go() -> dict[str, Any]:
            rt = Runtime(settings_for(data_dir), outbox=True)  # it emits nothing, and needs no bus
            try:
                await rt.start()
                found.update(await audit_verify(rt))
            finally:
                await rt.close()
            return found

        run(go)
        if found.get("status") != "ok":
            raise typer.Exit(1)
