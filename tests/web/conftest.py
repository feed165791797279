"""Fixtures of the browser tests: the app served on this process's port (tests/support/browser.py) and a
headless Debian chromium."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.support.browser import ORIGIN, PORT, chromium
from tests.support.served import served


@pytest.fixture
async def site(app: Any) -> AsyncIterator[str]:
    async with served(app, PORT):
        yield ORIGIN


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    async with chromium() as b:
        yield b
