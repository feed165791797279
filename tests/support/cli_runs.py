"""`meadhall <command>` run in-process (Typer's runner, in a thread) against the test's database and data directory,
as the porting tests and others need it: its events go to the outbox, which a served test app drains."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from typer.testing import CliRunner

from meadhall.cli.main import app as cli_app


class Ran(NamedTuple):
    """(exit code, stdout, stderr); an exception that ended the command is added to stderr, as the trace a real
    run prints."""

    code: int
    stdout: str
    stderr: str

    @property
    def exit_code(self) -> int:
        return self.code

    @property
    def json(self) -> dict[str, Any]:
        """The command's one JSON answer (asserts success)."""
        assert self.code == 0, (self.stdout, self.stderr)
        return dict(json.loads(self.stdout.strip().splitlines()[-1]))

    @property
    def error(self) -> dict[str, Any]:
        """The error envelope's content (asserts a failure with exit code 1)."""
        assert self.code == 1, (self.code, self.stdout, self.stderr)
        return dict(json.loads(self.stderr.strip().splitlines()[-1])["error"])


def cli_runner(settings: Any) -> Callable[..., Awaitable[Ran]]:
    env = {"DATA_DIR": str(settings.DATA_DIR), "DATABASE_URL": settings.DATABASE_URL,
           "SECRET_KEY": settings.SECRET_KEY, "DOMAIN": settings.DOMAIN, "REDIS_URL": ""}

    async def invoke(*args: str) -> Ran:
        result = await asyncio.to_thread(CliRunner().invoke, cli_app, list(args), env=env)
        crashed = result.exception if not isinstance(result.exception, SystemExit) else None
        return Ran(result.exit_code, result.stdout, result.stderr + ("" if crashed is None else repr(crashed)))

    return invoke
