"""GET /api/v1/openapi.json (API.md 3.1 and 8): an OpenAPI 3.1 document of EVERY route of the app,
merged with the authentication contract (cookie and Bearer schemes) and with the error envelope as the
schema of every error response. The checks walk whatever routes exist, so they cover routes added later."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi import APIRouter
from pydantic import BaseModel

ERROR_REF = {"$ref": "#/components/schemas/Error"}
HTTP_METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
# Documented exceptions to "every error response is the Error envelope": /readyz answers 503 with the
# readiness body (API.md 3.1).
NON_ENVELOPE_ERRORS = {("/readyz", "get", "503")}


class Probe(BaseModel):
    name: str
    size: int = 0


probe_router = APIRouter()


@probe_router.post("/probes/{probe_id}", status_code=201)
async def create_probe(probe_id: int, body: Probe) -> dict[str, Any]:
    return {"id": probe_id, **body.model_dump()}


@pytest.fixture
def backend() -> str:
    """The document does not depend on the database: one backend is enough."""
    return "sqlite"


@pytest.fixture
def app(app: Any) -> Any:
    """The app plus a router included later with its own prefix, as later issues will add them."""
    app.include_router(probe_router, prefix="/api/v1/_test")
    return app


@pytest.fixture
async def doc(client: httpx.AsyncClient) -> dict[str, Any]:
    r = await client.get("/api/v1/openapi.json")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/json")
    return r.json()


def operations(doc: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method in HTTP_METHODS:
                yield path, method, op


def app_routes(app: Any) -> set[tuple[str, str]]:
    """(path template, lower-case method) of every HTTP route, through included routers."""
    try:
        from fastapi.routing import iter_route_contexts
    except ImportError:  # older FastAPI: app.routes is already flat
        routes: Any = app.routes
    else:
        routes = iter_route_contexts(app.routes)
    found = set()
    for route in routes:
        methods = getattr(route, "methods", None)
        if not methods:
            continue  # WebSocket routes and mounts
        path = getattr(route, "path_format", None) or route.path
        found.update((path, m.lower()) for m in methods if m not in ("HEAD", "OPTIONS"))
    return found


def test_is_openapi_3_1_with_the_error_schema(doc: dict[str, Any]) -> None:
    assert doc["openapi"].startswith("3.1.")
    assert doc["info"]["title"] and doc["info"]["version"]
    error = doc["components"]["schemas"]["Error"]
    assert error["required"] == ["error"]
    assert set(error["properties"]["error"]["required"]) == {"code", "message"}
    # FastAPI's own validation-error shapes are replaced by the envelope.
    assert "HTTPValidationError" not in doc["components"]["schemas"]


def test_declares_the_two_session_carriers(doc: dict[str, Any]) -> None:
    schemes = doc["components"]["securitySchemes"]
    cookie = schemes["cookieAuth"]
    assert (cookie["type"], cookie["in"], cookie["name"]) == ("apiKey", "cookie", "__Host-session")
    assert schemes["bearerAuth"]["type"] == "http"
    assert schemes["bearerAuth"]["scheme"].lower() == "bearer"
    for path, method, op in operations(doc):
        for requirement in op.get("security", []):
            assert set(requirement) <= set(schemes), f"{method} {path}: unknown scheme in {requirement}"


def test_every_route_of_the_app_is_documented(app: Any, doc: dict[str, Any]) -> None:
    routes = app_routes(app)
    # The walk must see the routes (also those under included routers), or this test proves nothing.
    assert {("/healthz", "get"), ("/readyz", "get"), ("/api/v1/meta", "get"), ("/api/v1/gateway", "get"),
            ("/api/v1/openapi.json", "get"), ("/api/v1/_test/probes/{probe_id}", "post")} <= routes
    documented = {(path, method) for path, method, _ in operations(doc)}
    missing = sorted(routes - documented)
    assert not missing, f"routes missing from the OpenAPI document: {missing}"


def test_every_operation_declares_its_error_responses(doc: dict[str, Any]) -> None:
    problems = []
    for path, method, op in operations(doc):
        responses = op.get("responses", {})
        needed = {"500"}
        if path.startswith("/api/v1/"):
            needed.add("429")
        if op.get("parameters") or op.get("requestBody"):
            needed.add("422")
        if op.get("security"):
            needed.add("401")
        missing = needed - set(responses)
        if missing:
            problems.append(f"{method.upper()} {path}: no {sorted(missing)}")
    assert not problems, "\n".join(problems)


def test_every_error_response_is_the_error_envelope(doc: dict[str, Any]) -> None:
    problems = []
    checked = 0
    for path, method, op in operations(doc):
        for status, response in op.get("responses", {}).items():
            if status[0] not in "45" or (path, method, status) in NON_ENVELOPE_ERRORS:
                continue
            checked += 1
            schema = response.get("content", {}).get("application/json", {}).get("schema")
            if schema != ERROR_REF:
                problems.append(f"{method.upper()} {path} {status}: {schema}")
    assert checked, "no error responses found"
    assert not problems, "\n".join(problems)


def test_authenticated_operations_name_both_carriers(doc: dict[str, Any]) -> None:
    for path, method, op in operations(doc):
        if op.get("security"):
            assert op["security"] == [{"cookieAuth": []}, {"bearerAuth": []}], f"{method} {path}"


def test_a_route_added_later_is_fully_described(doc: dict[str, Any]) -> None:
    op = doc["paths"]["/api/v1/_test/probes/{probe_id}"]["post"]
    assert [p["name"] for p in op["parameters"]] == ["probe_id"]
    body_schema = op["requestBody"]["content"]["application/json"]["schema"]
    assert body_schema == {"$ref": "#/components/schemas/Probe"}
    assert "Probe" in doc["components"]["schemas"]
    assert {"201", "422", "429", "500"} <= set(op["responses"])
    assert op["responses"]["422"]["content"]["application/json"]["schema"] == ERROR_REF


def test_operation_ids_are_unique(doc: dict[str, Any]) -> None:
    ids = [op["operationId"] for _, _, op in operations(doc) if "operationId" in op]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    assert not duplicates, duplicates


def test_every_reference_resolves(doc: dict[str, Any]) -> None:
    def refs(node: Any) -> Iterator[str]:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "$ref" and isinstance(value, str):
                    yield value
                else:
                    yield from refs(value)
        elif isinstance(node, list):
            for value in node:
                yield from refs(value)

    unresolved = []
    for ref in set(refs(doc)):
        assert ref.startswith("#/"), ref
        node: Any = doc
        for part in ref[2:].split("/"):
            if not isinstance(node, dict) or part not in node:
                unresolved.append(ref)
                break
            node = node[part]
    assert not unresolved, sorted(unresolved)


def test_the_gateway_upgrade_is_documented(doc: dict[str, Any]) -> None:
    op = doc["paths"]["/gateway"]["get"]
    assert "101" in op["responses"] and "403" in op["responses"]
    assert {p["name"] for p in op["parameters"]} == {"v", "encoding"}
