"""Fixtures of the porting tests: the `meadhall` command in-process, and a local HTTP canary that must never be
contacted (no URL of an export is ever fetched)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.support.cli_runs import cli_runner
from tests.support.outbound import Canary


@pytest.fixture
def meadhall(settings: Any, rt: Any) -> Any:
    """`meadhall <args>` on the test's database (migrated by `rt`) and data directory."""
    return cli_runner(settings)


@pytest.fixture
async def canary() -> AsyncIterator[Canary]:
    listener = Canary()
    await listener.start()
    yield listener
    await listener.stop()
