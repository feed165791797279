"""The `gateway` fixture: a real server for gateway tests, uvicorn on a loopback port in the test's event
loop, serving the test's app (same runtime, clock and database). Its client is tests/support/gateway.py."""

from __future__ import annotations




