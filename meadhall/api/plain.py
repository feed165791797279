"""Plain Starlette routes for the busiest endpoints, in front of their documented FastAPI routes.

Why this module exists: sending a message and reading a page of history are the two requests clients
make most, and on them FastAPI's per-request dependency solving and body handling cost about 0.4 ms of
server CPU per message sent, about as much as the whole message service (docs/benchmarks.md, "Plain
routes for send and history"; with the other changes listed there, server CPU per send went from 1.9
to 0.7 ms and per history page from 2.7 to 1.0 ms). Only these routes are served here; every other
route is plain FastAPI, where that cost does not matter.

How it stays the same interface: a plain route answers the common case itself, calling the same
dependency functions in the same order, the same service and the same response code; whenever a
request is anything but plain (a body that is not a JSON object of the right shape, an unexpected
query value) it declines before doing anything with side effects, and the documented FastAPI route
answers it exactly as it always did. The FastAPI route stays the OpenAPI source for both.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Match, Route
from starlette.types import Receive, Scope, Send

from meadhall.core import jsonbytes

# Set in the scope when a plain route declined: routing again then reaches the FastAPI route.
DECLINED = "meadhall.plain_declined"

Handler = Callable[[Request], Awaitable[Response | None]]
M = TypeVar("M", bound=BaseModel)


class _Endpoint:
    """An ASGI app around `handler`: its response, or when it returns None, the documented route."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        response = await self.handler(request)
        if response is not None:
            await response(scope, receive, send)
            return
        scope[DECLINED] = True
        body = getattr(request, "_body", None)
        await scope["app"].router(scope, receive if body is None else _replay(body, receive), send)


def _replay(body: bytes, receive: Receive) -> Receive:
    """The request body again, for the route that answers after a plain route read it."""
    pending = True

    async def replay() -> Any:
        nonlocal pending
        if pending:
            pending = False
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class PlainRoute(Route):
    """Matches only fully (path and method) and never after declining, so that every other request is
    routed exactly as if this route did not exist."""

    def __init__(self, path: str, handler: Handler, method: str) -> None:
        super().__init__(path, _Endpoint(handler), methods=[method], include_in_schema=False)

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope.get(DECLINED):
            return Match.NONE, {}
        match, child = super().matches(scope)
        if match is not Match.FULL:
            return Match.NONE, {}
        # As FastAPI's routes do: the access log and the metrics name the request by this template.
        child["route"] = self
        return match, child


async def json_body(request: Request, model: type[M]) -> M | None:
    """The body as `model` when it is a JSON object that validates; None for anything else (the
    FastAPI route then answers with its usual validation error)."""
    content_type = request.headers.get("content-type", "")
    if content_type.split(";", 1)[0].strip().lower() != "application/json":
        return None
    raw = await request.body()
    try:
        # orjson: several times faster than json.loads. What it refuses and json accepts (NaN, a BOM, lone
        # surrogates, integers past 64 bits) is declined, so the FastAPI route answers it as it always did.
        data = orjson.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    try:
        return model.model_validate(data)
    except ValidationError:
        return None


class _Encoded(JSONResponse):
    """JSONResponse encoded by orjson: the same bytes for the objects the services build (core/jsonbytes.py)."""

    def render(self, content: Any) -> bytes:
        return jsonbytes.dumps(content)


def json_response(content: Any, status_code: int = 200) -> JSONResponse:
    """The response for a service's answer, encoded once."""
    return _Encoded(content, status_code=status_code)


def encoded_response(body: bytes, status_code: int = 200) -> Response:
    """The response for an answer a service already encoded (core/jsonbytes.py): the headers of
    `json_response`'s."""
    return Response(body, status_code=status_code, media_type="application/json")
