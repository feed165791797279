"""Periodic jobs (presence sweeper, resume-state cleanup, orphan files ...). Each run of a job that must
happen once per instance is claimed through the shared store first (a Redis key with NX when several
nodes run), so one node runs it per period: the single leader (docs/scaling.md)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import structlog

from meadhall.core.clock import Clock

log = structlog.get_logger("meadhall.jobs")

JobFn = Callable[[], Awaitable[Any]]


@dataclass
class Job:
    name: str
    every: float  # seconds
    fn: JobFn
    leader_only: bool  # once per instance (claimed in the store) rather than on every node


class Jobs:
    def __init__(self, store: Any, clock: Clock) -> None:
        self.store = store
        self.clock = clock
        self.jobs: list[Job] = []
        self._tasks: list[asyncio.Task[None]] = []

    def add(self, name: str, every: float, fn: JobFn, *, leader_only: bool = True) -> None:
        self.jobs.append(Job(name, every, fn, leader_only))

    async def run_once(self, job: Job) -> bool:
        """Run the job now if this node wins this period's claim; returns whether it ran."""
        if job.leader_only:
            now = self.clock.timestamp()
            period = int(now // job.every)
            if not await self.store.set_nx(f"job:{job.name}:{period}", 1, job.every * 2, now):
                return False
        try:
            await job.fn()
        except Exception:
            log.exception("job failed", job=job.name)
        return True

    async def _loop(self, job: Job) -> None:
        while True:
            await asyncio.sleep(job.every)
            await self.run_once(job)

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._loop(job), name=f"job-{job.name}") for job in self.jobs]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []
