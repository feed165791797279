"""CLI output contract (docs/operations.md): one JSON object on stdout and exit 0; on failure
`{"error": {"code", "message"}}` on stderr and exit 1 (usage errors exit 2)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Coroutine
from typing import Any

import typer

from meadhall.config import ConfigError
from meadhall.core.errors import AppError


def emit(payload: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(payload) + "\n")
    sys.stdout.flush()


def fail(code: str, message: str, exit_code: int = 1) -> None:
    sys.stderr.write(json.dumps({"error": {"code": code, "message": message}}) + "\n")
    raise typer.Exit(exit_code)


def run(coro_factory: Callable[[], Coroutine[Any, Any, dict[str, Any]]]) -> None:
    """Run one command: print its JSON object or its error envelope."""
    try:
        result = asyncio.run(coro_factory())
    except AppError as err:
        fail(err.code, err.message)
    except ConfigError as err:
        fail("validation.failed", str(err))
    else:
        emit(result)
