"""Meadhall benchmarks: `python -m bench` (or `make bench`); see docs/benchmarks.md.

Not run by the test command. bench.harness runs the server and measures it (/proc, statistics); bench.drivers holds the
load drivers (HTTP pool, WebSocket client, Context); bench.workloads the workload registry and the built-in workloads.
"""

from bench.drivers import Context, HttpPool, OpError, Samples, Skip, WsClient, expect
from bench.workloads import REGISTRY, Workload, register

__all__ = ["REGISTRY", "Context", "HttpPool", "OpError", "Samples", "Skip", "Workload", "WsClient", "expect", "register"]
