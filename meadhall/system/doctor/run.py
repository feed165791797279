"""Run every check of `meadhall doctor` in class order (findings.EXIT_CODES)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from meadhall.config import ConfigError, Settings
from meadhall.system.doctor import config, media, network, push, storage
from meadhall.system.doctor.findings import Finding, report


async def diagnose(load: Callable[[], Settings]) -> dict[str, Any]:
    """The report for the configuration `load` reads. One that does not load is the one finding: every
    other check needs it."""
    try:
        settings = load()
    except ConfigError as err:
        return report([config.load_failure(err)])
    findings: list[Finding] = [
        *config.check(settings),
        *await storage.check(settings),
        *await media.check(settings),
        *push.check(settings),
        *network.check(settings),
    ]
    return report(findings)
