"""The plain routes (api/plain.py) against their documented FastAPI routes: a client that reaches only the
documented route, and the comparison of the two answers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

from meadhall.api.plain import DECLINED

# Per request by nature: they differ between any two answers.
VARYING_HEADERS = {"x-request-id", "x-ratelimit-remaining", "x-ratelimit-reset", "x-ratelimit-reset-after"}


@asynccontextmanager
async def documented_client(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    """A client whose requests skip the plain routes, as if they had declined: the FastAPI route answers."""

    async def skip_plain(scope: Any, receive: Any, send: Any) -> None:
        await app({**scope, DECLINED: True}, receive, send)

    transport = httpx.ASGITransport(app=skip_plain, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
        yield c


def assert_same_answer(plain: httpx.Response, fastapi: httpx.Response) -> None:
    assert plain.status_code == fastapi.status_code
    assert plain.content == fastapi.content
    assert ({k: v for k, v in plain.headers.items() if k not in VARYING_HEADERS}
            == {k: v for k, v in fastapi.headers.items() if k not in VARYING_HEADERS})
