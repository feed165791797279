"""What the router knows about a path, for the answers it gives without reaching a route: the `Allow`
header of 405 `request.method_not_allowed` (RFC 9110 15.5.6, docs/reference/errors.md), and the routing rule that
literal segments (`@me`, `public`, `search`, ...) take precedence over `{id}` segments in the same position.

Starlette tries routes in order and serves a method through the first template that matches, so without a
guard `DELETE /guilds/1/members/@me` would reach the `{user_id}` route although `/members/@me` is a path of
its own. `LiteralPrecedence` answers 405 for a method the winning template does not declare, which makes
what is served, what `Allow` says and what the OpenAPI document lists the same thing."""

from __future__ import annotations

import functools
import re
from typing import Any

from starlette.exceptions import HTTPException
from starlette.routing import compile_path

_CACHE = "meadhall_route_methods"
Table = list[tuple[re.Pattern[str], int, frozenset[str]]]


def _flat_routes(app: Any) -> Any:
    """Every route, also those of included routers (FastAPI >= 0.165 keeps them nested)."""
    try:
        from fastapi.routing import iter_route_contexts
    except ImportError:  # older FastAPI: app.routes is flat
        return app.routes
    return iter_route_contexts(app.routes)


def _is_websocket(route: Any) -> bool:
    from starlette.routing import WebSocketRoute
    return isinstance(getattr(route, "route", route), WebSocketRoute)


def _table(app: Any) -> Table:
    table = getattr(app.state, _CACHE, None)
    if table is None:
        table = []
        for route in _flat_routes(app):
            path = getattr(route, "path", None)
            # A WebSocket route is a GET with an upgrade (the OpenAPI document lists the gateway so).
            methods = frozenset({"GET"}) if _is_websocket(route) else getattr(route, "methods", None)
            if methods and isinstance(path, str):
                regex, _, _ = compile_path(path)
                table.append((regex, path.count("{"), frozenset(methods)))
        setattr(app.state, _CACHE, table)
    return table


def allowed_methods(app: Any, path: str) -> list[str]:
    """The methods of every route whose template matches `path`. Where templates overlap, the one with
    the fewest parameters wins for the whole path (literal segments win, as in OpenAPI path matching):
    `/guilds/1/members/@me` allows what `/guilds/{guild_id}/members/@me` declares."""
    matches = [(params, methods) for regex, params, methods in _table(app) if regex.match(path)]
    if not matches:
        return []
    fewest = min(params for params, _ in matches)
    return sorted(set().union(*(methods for params, methods in matches if params == fewest)))


def _segments(path: str) -> list[str]:
    return path.strip("/").split("/")


def _shadows(literal: str, other: str) -> bool:
    """Whether some path matches both templates and `literal` has a fixed segment where `other` has a
    parameter (so `literal` wins there). Conservative for `{name:path}` parameters: never."""
    a, b = _segments(literal), _segments(other)
    if len(a) != len(b) or ":path}" in literal or ":path}" in other:
        return False
    wins = False
    for x, y in zip(a, b, strict=True):
        x_param, y_param = x.startswith("{"), y.startswith("{")
        if not x_param and not y_param and x != y:
            return False
        if x_param and not y_param:
            return False
        wins = wins or (y_param and not x_param)
    return wins


@functools.cache
def _guarded_templates(paths: frozenset[str], websocket_paths: frozenset[str]) -> list[re.Pattern[str]]:
    """Comparing every template with every other takes 0.1 s for ~200 routes; every app of a process (one
    per test) has the same ones, so it is done once per set of paths."""
    templates = {p for p in paths if any(_shadows(p, q) for q in paths)} | websocket_paths
    return [compile_path(p)[0] for p in sorted(templates)]


class LiteralPrecedence:
    """Around the router: 405 (with `Allow`, by the error handler) for a method the winning template of a
    path does not declare, where a template with more parameters would otherwise serve it; and for any method
    but GET on a WebSocket-only path (the gateway), which no HTTP route matches."""

    # Paths seen recently -> the methods their winning template allows (None: not a guarded path). Matching
    # a path against every template took 221 regular expressions per request of a guarded path such as
    # PATCH /users/@me; busy paths repeat. Bounded: emptied when full (paths carry ids).
    REMEMBERED = 4096

    def __init__(self, app: Any, inner: Any) -> None:
        self.app, self.inner = app, inner
        self.guarded: list[re.Pattern[str]] | None = None
        self._allowed: dict[str, frozenset[str] | None] = {}

    def _guarded(self) -> list[re.Pattern[str]]:
        if self.guarded is None:
            routes = [r for r in _flat_routes(self.app) if isinstance(getattr(r, "path", None), str)]
            self.guarded = _guarded_templates(frozenset(r.path for r in routes),
                                              frozenset(r.path for r in routes if _is_websocket(r)))
        return self.guarded

    def _allowed_at(self, path: str) -> frozenset[str] | None:
        """The methods allowed at a guarded path; None for any other path (the router decides)."""
        try:
            return self._allowed[path]
        except KeyError:
            pass
        found = (frozenset(allowed_methods(self.app, path))
                 if any(regex.match(path) for regex in self._guarded()) else None)
        if len(self._allowed) >= self.REMEMBERED:
            self._allowed.clear()
        self._allowed[path] = found
        return found

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            allowed = self._allowed_at(scope["path"])
            if allowed is not None and scope["method"] not in allowed:
                raise HTTPException(status_code=405)
        await self.inner(scope, receive, send)


def enforce_literal_precedence(app: Any) -> None:
    """Install LiteralPrecedence inside the exception middleware (so the error handlers render its 405)."""
    app.router.middleware_stack = LiteralPrecedence(app, app.router.middleware_stack)
