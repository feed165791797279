"""OpenAPI 3.1 document: generated from the routes, merged with the authentication contract (cookie and
Bearer schemes), the error envelope as the response schema of every error status, the rate-limit and
session headers (docs/reference/limits.md, docs/architecture.md) and stable camelCase operation ids (the endpoint's name, or its explicit
`operation_id=`)."""

from __future__ import annotations

import typing
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIWebSocketRoute
from pydantic import AfterValidator, BaseModel, BeforeValidator

from meadhall.core import permissions as perms
from meadhall.core.errors import REGISTRY
from meadhall.core.ids import MAX_ID
from meadhall.core.text import check_multiline, check_single_line

ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {
                "code": {"type": "string", "description": "Stable machine code (docs/reference/errors.md)"},
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
_METHODS = {"get", "post", "put", "patch", "delete", "head"}

# docs/reference/limits.md: every /api/v1 answer (and /files/{id}) that passed a limiter describes its most specific bucket.
RATE_LIMIT_HEADERS: dict[str, dict[str, Any]] = {
    "X-RateLimit-Limit": {"description": "Capacity of the bucket", "schema": {"type": "integer"}},
    "X-RateLimit-Remaining": {"description": "Requests left now", "schema": {"type": "integer"}},
    "X-RateLimit-Reset": {"description": "Unix time (seconds, 3 decimals) when the bucket is full again",
                          "schema": {"type": "number"}},
    "X-RateLimit-Reset-After": {"description": "Seconds (3 decimals) until the bucket is full again",
                                "schema": {"type": "number"}},
    "X-RateLimit-Bucket": {"description": "Bucket name (docs/reference/limits.md), e.g. `messages.send`",
                           "schema": {"type": "string"}},
}
RETRY_AFTER = {"description": "Whole seconds to wait", "schema": {"type": "integer", "minimum": 0}}
# docs/architecture.md: a token older than SESSION_ROTATE_HOURS is rotated on its next authenticated use.
SESSION_TOKEN = {"description": "The session's new token after a rotation; the old one stays valid for 60 s. "
                                "A request authenticated by cookie also gets a new `Set-Cookie`.",
                 "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]{43}$"}}


def _at_most(limit: int) -> str:
    """A regular expression for the decimal numbers 0..limit (leading zeros allowed, as parse_id does)."""
    digits = str(limit)
    options = [f"[0-9]{{1,{len(digits) - 1}}}"] if len(digits) > 1 else []
    for i, d in enumerate(digits):
        if d != "0":
            rest = len(digits) - i - 1
            options.append(f"{digits[:i]}[0-{int(d) - 1}]" + (f"[0-9]{{{rest}}}" if rest else ""))
    options.append(digits)
    return "^(?:" + "|".join(options) + ")$"


# A snowflake id as a string (docs/architecture.md): what core.ids.parse_id accepts.
ID_PATTERN = _at_most(MAX_ID)
# For an id parameter checked by the code (api.pagination.query_id), so its message stays "must be an id".
ID_SCHEMA: dict[str, Any] = {"pattern": ID_PATTERN}
_NAMES = "|".join(p.name for p in perms.Permission if p.name and p.value and (p.value & (p.value - 1)) == 0)
# docs/reference/permissions.md: names joined with |, surrounding whitespace ignored, "" (or whitespace) the empty set.
PERMISSIONS_PATTERN = rf"^\s*(?:(?:{_NAMES})\s*(?:\|\s*(?:{_NAMES})\s*)*)?$"
# A room override may allow or deny every permission but ADMINISTRATOR (docs/reference/permissions.md).
_OVERRIDE_NAMES = "|".join(n for n in _NAMES.split("|") if n != perms.Permission.ADMINISTRATOR.name)
OVERRIDE_PERMISSIONS_PATTERN = rf"^\s*(?:(?:{_OVERRIDE_NAMES})\s*(?:\|\s*(?:{_OVERRIDE_NAMES})\s*)*)?$"
# docs/reference/errors.md: no control characters; single-line fields neither line nor paragraph separators.
SINGLE_LINE_PATTERN = "^[^\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029]*$"
MULTILINE_PATTERN = "^[^\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f]*$"

# Validators that enforce what a JSON Schema can say: merged into the document wherever a request model
# or parameter uses them (build_openapi), so the document states exactly what the code refuses.
VALIDATOR_SCHEMAS: dict[Callable[..., Any], dict[str, Any]] = {
    check_single_line: {"pattern": SINGLE_LINE_PATTERN},
    check_multiline: {"pattern": MULTILINE_PATTERN},
}


def not_null(schema: dict[str, Any]) -> None:
    """`json_schema_extra` of an optional field that refuses null (absent means unchanged on a PATCH, but
    the field cannot be cleared): the document drops the null branch pydantic writes for `X | None`."""
    branches = [b for b in schema.pop("anyOf", []) if b.get("type") != "null"]
    if len(branches) == 1:
        schema.update(branches[0])
    elif branches:
        schema["anyOf"] = branches
    schema.pop("default", None)


def errors(*codes: str) -> dict[int | str, dict[str, Any]]:
    """`responses=` entry for a route: the specific error codes it can answer, grouped by status."""
    by_status: dict[int, list[str]] = defaultdict(list)
    for code in codes:
        by_status[REGISTRY[code][0]].append(code)
    return {
        status: {"description": ", ".join(sorted(c)), "content": {"application/json": {"schema": _REF}}}
        for status, c in by_status.items()
    }


# The rules of an operation that no schema can state: they depend on stored state (an unknown referenced id,
# a custom emoji that does not exist), on the clock (a time that must lie in the future), or relate two query
# parameters (OpenAPI cannot). Each names the field the answer names and the error code it answers with.
RULES_KEY = "x-rules"


def rules(by_field: dict[str, str], code: str = "validation.failed") -> dict[str, Any]:
    """`openapi_extra=` entry for a route: field -> the rule, answered with `code` (422). Shown in the
    description of the 422 answer, and read by the schemathesis run (tests/api/test_schemathesis.py): a
    schema-valid request may be refused with 422 only under a rule stated here."""
    return {RULES_KEY: [{"field": f, "code": code, "rule": rule} for f, rule in by_field.items()]}


def with_rules(extra: dict[str, Any], *more: dict[str, Any]) -> dict[str, Any]:
    """`openapi_extra` merged with `rules(...)` entries."""
    merged = dict(extra)
    for item in more:
        merged[RULES_KEY] = [*merged.get(RULES_KEY, []), *item.get(RULES_KEY, [])]
    return merged


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
    components["headers"] = {**RATE_LIMIT_HEADERS, "Retry-After": RETRY_AFTER, "X-Session-Token": SESSION_TOKEN}
    _websocket_routes(app, doc)
    ids = operation_ids(app)
    for path, item in doc.get("paths", {}).items():
        for method, op in item.items():
            if method not in _METHODS:
                continue
            op["operationId"] = ids.get((path, method), op.get("operationId"))
            responses = op.setdefault("responses", {})
            # FastAPI's own 422 schema is replaced by the envelope.
            query = {p["name"] for p in op.get("parameters", []) if p.get("in") == "query"}
            if {"before", "after"} <= query:  # api/pagination.py; OpenAPI cannot relate two parameters
                op.setdefault(RULES_KEY, []).append({"field": "before", "code": "validation.failed",
                                                     "rule": "not together with `after` (docs/architecture.md)"})
            if "422" in responses or op.get("parameters") or op.get("requestBody"):
                codes = {r["code"] for r in op.get(RULES_KEY, [])} | {"validation.failed"}
                codes |= set(responses.get("422", {}).get("description", "validation.failed").split(", "))
                stated = "".join(f"\n- `{r['field']}`: {r['rule']} ({r['code']})" for r in op.get(RULES_KEY, []))
                responses["422"] = {"description": ", ".join(sorted(codes)) + (
                    "\n\nBesides the schema, these rules:" + stated if stated else "")}
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
            _headers(path, op)
    _validator_constraints(app, doc)
    doc.get("components", {}).get("schemas", {}).pop("HTTPValidationError", None)
    doc.get("components", {}).get("schemas", {}).pop("ValidationError", None)
    app.openapi_schema = doc
    return doc


def _constraints(annotation: Any, metadata: list[Any] | None = None) -> dict[str, Any]:
    """The JSON Schema of the known validators found on a field: in its metadata, or inside its
    annotation (`Annotated[str, AfterValidator(...)] | None`)."""
    found: dict[str, Any] = {}
    for item in metadata or []:
        if isinstance(item, AfterValidator | BeforeValidator):
            found.update(VALIDATOR_SCHEMAS.get(item.func, {}))
    if typing.get_origin(annotation) is typing.Annotated:
        found.update(_constraints(None, list(annotation.__metadata__)))
        annotation = typing.get_args(annotation)[0]
    for arg in typing.get_args(annotation):
        found.update(_constraints(arg))
    return found


def _merge(schema: dict[str, Any], extra: dict[str, Any]) -> None:
    """Into the string branch(es) of a property schema (a nullable field is `anyOf: [string, null]`)."""
    branches = schema.get("anyOf", [schema])
    for branch in branches:
        if branch.get("type") == "string":
            branch.update(extra)


def _models(annotation: Any) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        for field in annotation.model_fields.values():
            yield from _models(field.annotation)
    for arg in typing.get_args(annotation):
        yield from _models(arg)


def _validator_constraints(app: FastAPI, doc: dict[str, Any]) -> None:
    schemas = doc.get("components", {}).get("schemas", {})
    seen: set[type[BaseModel]] = set()
    for route in _flat_routes(app):
        body = getattr(route, "body_field", None)
        for model in _models(body.field_info.annotation if body is not None else None):
            if model in seen:
                continue
            seen.add(model)
            component = schemas.get(model.__name__) or schemas.get(f"{model.__name__}-Input") or {}
            for name, field in model.model_fields.items():
                extra = _constraints(field.annotation, field.metadata)
                prop = component.get("properties", {}).get(field.alias or name)
                if extra and prop is not None:
                    _merge(prop, extra)
        dependant = getattr(route, "dependant", None)
        if dependant is None:
            continue
        params = {p.alias: p for d in _dependants(dependant) for p in d.query_params}
        for method in getattr(route, "methods", None) or ():
            op = doc.get("paths", {}).get(route.path, {}).get(method.lower())
            for param in (op or {}).get("parameters", []):
                query = params.get(param["name"]) if param["in"] == "query" else None
                extra = _constraints(query.field_info.annotation, query.field_info.metadata) if query else {}
                if extra:
                    _merge(param["schema"], extra)


def _dependants(dependant: Any) -> Iterator[Any]:
    yield dependant
    for sub in dependant.dependencies:
        yield from _dependants(sub)


def _headers(path: str, op: dict[str, Any]) -> None:
    """The rate-limit headers on every answer of a limited route, `Retry-After` on 429 and 503, and
    `X-Session-Token` on the answers of authenticated routes that passed authentication."""
    limited = path.startswith("/api/v1/") or path.startswith("/files/")
    for status, resp in op["responses"].items():
        headers = resp.setdefault("headers", {})
        if limited and status not in ("401", "500"):  # 401 and 500 can come before the limiter
            headers.update({name: {"$ref": f"#/components/headers/{name}"} for name in RATE_LIMIT_HEADERS})
        if status in ("429", "503"):
            headers["Retry-After"] = {"$ref": "#/components/headers/Retry-After"}
        if op.get("security") and status != "401":
            headers["X-Session-Token"] = {"$ref": "#/components/headers/X-Session-Token"}
        if not headers:
            del resp["headers"]


def camel_case(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def operation_ids(app: FastAPI) -> dict[tuple[str, str], str]:
    """(path, method) -> operation id: the route's `operation_id=`, else its endpoint name in camelCase
    (`send_message` -> `sendMessage`), so ids stay the same when paths or prefixes change."""
    ids = {}
    for route in _flat_routes(app):
        methods = getattr(route, "methods", None) or ()
        if getattr(route, "include_in_schema", True) is False:
            continue
        for method in methods:
            explicit = getattr(route, "operation_id", None)
            ids[(route.path, method.lower())] = explicit or camel_case(route.name)
    return ids


def _websocket_routes(app: FastAPI, doc: dict[str, Any]) -> None:
    """WebSocket routes (the gateway) as the GET of their upgrade: OpenAPI has no WebSocket operation."""
    for route in _flat_routes(app):
        if not isinstance(getattr(route, "route", route), APIWebSocketRoute):
            continue
        text = (route.endpoint.__doc__ or route.name).strip()
        doc.setdefault("paths", {})[route.path] = {"get": {
            "summary": text.splitlines()[0],
            "description": text,
            "operationId": "connectGateway",
            "parameters": [
                {"name": "v", "in": "query", "required": False, "schema": {"type": "integer", "enum": [1]}},
                {"name": "encoding", "in": "query", "required": False,
                 "schema": {"type": "string", "enum": ["json"]}},
            ],
            "responses": {
                "101": {"description": "Switching Protocols: the WebSocket protocol of docs/gateway.md follows"},
                "403": {"description": "auth.origin_mismatch: a session cookie with a foreign Origin",
                        "content": {"application/json": {"schema": _REF}}},
                "404": {"description": "route.not_found: a plain HTTP request, not a WebSocket upgrade",
                        "content": {"application/json": {"schema": _REF}}},
            },
        }}


def _flat_routes(app: FastAPI) -> Any:
    """Every route, also those of included routers (FastAPI >= 0.165 keeps them nested)."""
    try:
        from fastapi.routing import iter_route_contexts
    except ImportError:  # older FastAPI: app.routes is flat
        return app.routes
    return iter_route_contexts(app.routes)
