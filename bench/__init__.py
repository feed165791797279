"""Meadhall benchmarks: `python -m bench` (or `make bench`); see docs/benchmarks.md.

Not run by the test command. bench.harness runs the server and measures it (/proc, statistics); bench.workloads holds the
load drivers (HTTP pool, WebSocket client, Context) and the workload registry.
"""

from bench.workloads import (
    REGISTRY,
    Context,
    HttpPool,
    OpError,
    Samples,
    Skip,
    Workload,
    WsClient,
    expect,
    register,
)

__all__ = ["REGISTRY", "Context", "HttpPool", "OpError", "Samples", "Skip", "Workload", "WsClient", "expect", "register"]
