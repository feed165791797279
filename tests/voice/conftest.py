"""The voice tests run against the media-server stand-in (tests/support/livekit_standin.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.livekit_standin import StandIn
from tests.support.voice import voice_settings


@pytest.fixture
def settings_overrides(standin: StandIn, request: pytest.FixtureRequest) -> dict[str, Any]:
    """Voice on against the stand-in; a test may replace it (indirect parametrisation, `{}`: voice off)."""
    return getattr(request, "param", voice_settings(standin.url))
