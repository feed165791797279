"""Prometheus metrics of one service process (docs/reference/configuration.md, `METRICS_ENABLED`), served at `/metrics`.

Each runtime owns its own CollectorRegistry: tests build many apps in one process, and a process-wide
default registry would refuse the second set of metric names. The hot paths (every request, every
delivery) only touch pre-bound label children kept here; gauges that describe state (connections,
pending hashes) are read at scrape time through callbacks, costing nothing in between.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prometheus_client import Counter, Histogram

# Seconds. The default buckets of prometheus-client start at 5 ms; the service answers most requests
# in well under that, so the lower end is finer.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
LAG_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0)
# A READY takes from a few ms (a new account) to tens of ms (hundreds of guilds, conversations and
# friends): finer steps between 5 and 50 ms tell whether a large one stays within 25 ms.
READY_BUCKETS = (0.0025, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.05, 0.075, 0.1, 0.25, 0.5, 1.0,
                 2.5, 5.0)

# The text format `generate_latest` writes, which every Prometheus server reads (newer prometheus-client
# releases announce a later version by default, which older servers do not know).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Metrics:
    def __init__(self) -> None:
        # prometheus-client (some 1 MiB) is imported only by a node with METRICS_ENABLED, which builds this.
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter("meadhall_http_requests", "HTTP requests answered, by route template and status",
                                ["method", "route", "status"], registry=r)
        self.latency = Histogram("meadhall_http_request_duration_seconds",
                                 "HTTP request latency, by route template and status",
                                 ["method", "route", "status"], buckets=LATENCY_BUCKETS, registry=r)
        self.gateway_connections = Gauge("meadhall_gateway_connections",
                                         "Identified gateway connections (IDENTIFY or RESUME accepted) on this node", registry=r)
        self.events_delivered = Counter("meadhall_gateway_events_delivered",
                                        "Dispatches handed to gateway connections on this node", registry=r)
        self.ready = Histogram("meadhall_gateway_ready_seconds",
                               "Time from an IDENTIFY frame's receipt to its READY handed to the connection",
                               buckets=READY_BUCKETS, registry=r)
        self.bus_lag = Histogram("meadhall_bus_lag_seconds",
                                 "Delay from an event's publication to its receipt by this node's bus reader",
                                 buckets=LAG_BUCKETS, registry=r)
        self.hash_pool_pending = Gauge("meadhall_hash_pool_pending",
                                       "Password and code hashes submitted to the hashing pool and not finished",
                                       registry=r)
        # (method, route, status) -> (counter child, histogram child): `labels()` takes a lock and
        # builds a key tuple on every call, which is most of the cost of counting a request.
        self._children: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        key = (method, route, status)
        children = self._children.get(key)
        if children is None:
            label = str(status)
            children = (self.requests.labels(method, route, label), self.latency.labels(method, route, label))
            self._children[key] = children
        children[0].inc()
        children[1].observe(seconds)

    def observe_bus_lag(self, published_at: float) -> None:
        """`published_at` is wall-clock (time.time()) so that it compares across nodes."""
        if published_at:
            self.bus_lag.observe(max(0.0, time.time() - published_at))

    def watch_connections(self, count: Callable[[], int]) -> None:
        self.gateway_connections.set_function(count)

    def watch_hash_pool(self, pending: Callable[[], int]) -> None:
        self.hash_pool_pending.set_function(pending)

    def render(self) -> bytes:
        from prometheus_client import generate_latest

        return generate_latest(self.registry)
