"""Run `meadhall` commands in-process (Typer's runner) against the test database of the `settings`
fixture, so HTTP assertions through `client` see what the CLI wrote."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import pytest
from typer.testing import CliRunner

from meadhall.cli.main import app as cli_app


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> dict[str, Any]:
        lines = [ln for ln in self.stdout.splitlines() if ln.strip()]
        assert len(lines) == 1, f"expected one JSON line, got: {self.stdout!r}"
        return json.loads(lines[0])

    @property
    def error(self) -> dict[str, Any]:
        return json.loads(self.stderr.strip().splitlines()[-1])["error"]


@pytest.fixture
def cli_env(settings: Any, rt: Any) -> dict[str, str]:
    """Environment for the CLI: the same database, data directory and secret as the app under test."""
    env = {
        "DATA_DIR": str(settings.DATA_DIR),
        "DATABASE_URL": settings.DATABASE_URL,
        "SECRET_KEY": settings.SECRET_KEY,
        "DOMAIN": settings.DOMAIN,
        "REDIS_URL": "",
    }
    return env


@pytest.fixture
def cli(cli_env: dict[str, str]) -> Any:
    runner = CliRunner()

    async def invoke(*args: str, env: dict[str, str] | None = None) -> CliResult:
        merged = {**cli_env, **(env or {})}
        result = await asyncio.to_thread(runner.invoke, cli_app, list(args), env=merged)
        return CliResult(result.exit_code, result.stdout, result.stderr)

    return invoke
