"""Fixtures of the instance-administration tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from meadhall.core.ids import SnowflakeGenerator


@pytest.fixture
def start(rt, clock) -> datetime:
    """Noon of a day ahead of the wall clock; ids are made from the test's clock from here on (the statistics
    count by the time in ids)."""
    noon = (datetime.now(UTC) + timedelta(days=10)).replace(hour=12, minute=0, second=0, microsecond=0)
    clock.set(noon)
    rt.ids = SnowflakeGenerator(rt.settings.NODE_ID, now_ms=lambda: int(clock.now().timestamp() * 1000))
    return noon
