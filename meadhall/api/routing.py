"""What the router knows about a path, for the answers it gives without reaching a route: the `Allow`
header of 405 `request.method_not_allowed` (RFC 9110 15.5.6, API.md 0.7)."""

from __future__ import annotations

import re
from typing import Any

from starlette.routing import compile_path

_CACHE = "meadhall_route_methods"


def _flat_routes(app: Any) -> Any:
    """Every route, also those of included routers (FastAPI >= 0.165 keeps them nested)."""
    try:
        from fastapi.routing import iter_route_contexts
    except ImportError:  # older FastAPI: app.routes is flat
        return app.routes
    return iter_route_contexts(app.routes)


def _table(app: Any) -> list[tuple[re.Pattern[str], int, frozenset[str]]]:
    table = getattr(app.state, _CACHE, None)
    if table is None:
        table = []
        for route in _flat_routes(app):
            methods = getattr(route, "methods", None)
            if methods and isinstance(getattr(route, "path", None), str):
                regex, _, _ = compile_path(route.path)
                table.append((regex, route.path.count("{"), frozenset(methods)))
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
