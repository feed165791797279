"""OpenAPI 3.1 document: generated from the routes, merged with the authentication contract (cookie and
Bearer schemes) and the error envelope as the response schema of every error status."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIWebSocketRoute

from meadhall.core.errors import REGISTRY

ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {
                "code": {"type": "string", "description": "Stable machine code (API.md Appendix D)"},
                "message": {"type": "string"},
                "details": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"field": {"type": "string"}, "message": {"type": "string"}},
                    },
                },
                "retry_after": {"type": "number"},
                "bucket": {"type": "string"},
                "permission": {"type": ["string", "null"]},
            },
            "additionalProperties": True,
        }
    },
}
_REF = {"$ref": "#/components/schemas/Error"}


def errors(*codes: str) -> dict[int | str, dict[str, Any]]:
    """`responses=` entry for a route: the specific error codes it can answer, grouped by status."""
    by_status: dict[int, list[str]] = defaultdict(list)
    for code in codes:
        by_status[REGISTRY[code][0]].append(code)
    return {
        status: {"description": ", ".join(sorted(c)), "content": {"application/json": {"schema": _REF}}}
        for status, c in by_status.items()
    }


def _add(op: dict[str, Any], status: str, description: str) -> None:
    responses = op.setdefault("responses", {})
    entry = responses.setdefault(status, {"description": description})
    entry["content"] = {"application/json": {"schema": _REF}}


def build_openapi(app: FastAPI) -> dict[str, Any]:
    if app.openapi_schema:
        return app.openapi_schema
    doc = get_openapi(
        title="Meadhall API",
        version=app.version,
        openapi_version="3.1.0",
        description="REST interface of Meadhall. Errors use the envelope `{\"error\": {\"code\", \"message\"}}`.",
        routes=app.routes,
    )
    components = doc.setdefault("components", {})
    components.setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    schemes = components.setdefault("securitySchemes", {})
    schemes["cookieAuth"] = {"type": "apiKey", "in": "cookie", "name": "__Host-session"}
    schemes["bearerAuth"] = {"type": "http", "scheme": "bearer", "description": "Opaque session token"}
    _websocket_routes(app, doc)
    for path, item in doc.get("paths", {}).items():
        for method, op in item.items():
            if method not in {"get", "post", "put", "patch", "delete", "head"}:
                continue
            responses = op.setdefault("responses", {})
            # FastAPI's own 422 schema is replaced by the envelope.
            if "422" in responses or op.get("parameters") or op.get("requestBody"):
                responses["422"] = {"description": "validation.failed"}
                _add(op, "422", "validation.failed")
            if op.get("security"):
                op["security"] = [{"cookieAuth": []}, {"bearerAuth": []}]
                _add(op, "401", "auth.unauthorized")
            if path.startswith("/api/v1"):
                _add(op, "429", "rate_limited")
            _add(op, "500", "internal.error")
            for status, resp in responses.items():
                if status[0] in "45" and "content" not in resp:
                    resp["content"] = {"application/json": {"schema": _REF}}
    doc.get("components", {}).get("schemas", {}).pop("HTTPValidationError", None)
    doc.get("components", {}).get("schemas", {}).pop("ValidationError", None)
    app.openapi_schema = doc
    return doc


def _websocket_routes(app: FastAPI, doc: dict[str, Any]) -> None:
    """WebSocket routes (the gateway) as the GET of their upgrade: OpenAPI has no WebSocket operation."""
    for route in _flat_routes(app):
        if not isinstance(getattr(route, "route", route), APIWebSocketRoute):
            continue
        text = (route.endpoint.__doc__ or route.name).strip()
        doc.setdefault("paths", {})[route.path] = {"get": {
            "summary": text.splitlines()[0],
            "description": text,
            "operationId": f"websocket_{route.name}",
            "parameters": [
                {"name": "v", "in": "query", "required": False, "schema": {"type": "integer", "enum": [1]}},
                {"name": "encoding", "in": "query", "required": False,
                 "schema": {"type": "string", "enum": ["json"]}},
            ],
            "responses": {
                "101": {"description": "Switching Protocols: the WebSocket protocol of API.md section 4 follows"},
                "403": {"description": "auth.origin_mismatch: a session cookie with a foreign Origin"},
            },
        }}


def _flat_routes(app: FastAPI) -> Any:
    """Every route, also those of included routers (FastAPI >= 0.165 keeps them nested)."""
    try:
        from fastapi.routing import iter_route_contexts
    except ImportError:  # older FastAPI: app.routes is flat
        return app.routes
    return iter_route_contexts(app.routes)
