"""What the gateway adds when the app is built (`create_app`): the hub on the bus, its resume store, the route
and its timers."""

from __future__ import annotations

from fastapi import FastAPI

from meadhall.accounts import presence
from meadhall.gateway.caps import ConnectionCaps, MemoryConnectionCaps, RedisConnectionCaps
from meadhall.gateway.endpoint import router
from meadhall.gateway.hub import Hub
from meadhall.gateway.protocol import Timing, stale_after
from meadhall.gateway.resume import MemoryResumeStore, RedisResumeStore, ResumeStore
from meadhall.runtime import Runtime

HUB_SWEEP_EVERY = 10.0


def setup(app: FastAPI, rt: Runtime) -> Hub:
    store: ResumeStore = (RedisResumeStore(rt.redis, prefix=rt.redis_prefix) if rt.redis is not None
                          else MemoryResumeStore())
    timing = Timing()
    caps: ConnectionCaps = (RedisConnectionCaps(rt.redis, rt.redis_prefix, stale_after(timing)) if rt.redis is not None
                            else MemoryConnectionCaps())
    hub = Hub(store, rt.clock, caps, rt.metrics)
    if rt.metrics is not None:
        rt.metrics.watch_connections(hub.connection_count)
    app.state.hub = hub
    app.state.gateway_timing = timing
    app.include_router(router)

    async def sweep_hub() -> None:
        hub.sweep()

    async def sweep_presence() -> None:
        await presence.sweep(rt)

    rt.jobs.add("gateway-sweep", HUB_SWEEP_EVERY, sweep_hub, leader_only=False)
    rt.jobs.add("presence-sweep", presence.SWEEP_EVERY, sweep_presence)
    return hub


def start_gateway(app: FastAPI, rt: Runtime) -> None:
    app.state.hub.follow(rt.bus)


async def stop_gateway(app: FastAPI, rt: Runtime) -> None:
    hub: Hub = app.state.hub
    if rt.redis is not None:  # other nodes take over this node's gateway sessions until they resume
        await hub.hand_over(rt.bus)
    hub.unfollow(rt.bus)
    await hub.shutdown()
