"""GET /api/v1/openapi.json (the OpenAPI document, docs/architecture.md): an OpenAPI 3.1 document of EVERY route of the app,
merged with the authentication contract (cookie and Bearer schemes) and with the error envelope as the
schema of every error response. The checks walk whatever routes exist, so they cover routes added later."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi import APIRouter
from pydantic import BaseModel

from meadhall.api.routing import LiteralPrecedence

ERROR_REF = {"$ref": "#/components/schemas/Error"}
HTTP_METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
# Documented exceptions to "every error response is the Error envelope": /readyz answers 503 with the
# readiness body (the OpenAPI document); the public invitation page answers an unknown code with an HTML page (OpenAPI: invitePage).
NON_ENVELOPE_ERRORS = {("/readyz", "get", "503"), ("/invite/{code}", "get", "404")}


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


def test_operation_ids_are_stable_camel_case_names(doc: dict[str, Any]) -> None:
    ids = {(path, method): op.get("operationId") for path, method, op in operations(doc)}
    missing = sorted(f"{m.upper()} {p}" for (p, m), i in ids.items() if not i)
    assert not missing, missing
    not_camel = sorted(i for i in ids.values() if not re.fullmatch(r"[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)*", i))
    assert not not_camel, not_camel  # FastAPI's generated ids look like send_message_api_v1_channels_..._post
    assert ids[("/api/v1/channels/{channel_id}/messages", "post")] == "sendMessage"
    assert ids[("/api/v1/channels/{channel_id}/messages", "get")] == "listMessages"
    assert ids[("/api/v1/channels/{channel_id}/typing", "post")] == "sendTyping"
    assert ids[("/api/v1/guilds/{guild_id}/members/@me", "patch")] == "updateOwnMember"
    assert ids[("/api/v1/users/@me", "patch")] == "updateMe"
    assert ids[("/gateway", "get")] == "connectGateway"
    assert ids[("/api/v1/_test/probes/{probe_id}", "post")] == "createProbe"  # a route added later too


def test_limited_answers_document_the_rate_limit_headers(doc: dict[str, Any]) -> None:
    headers = doc["components"]["headers"]
    assert {"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Reset-After",
            "X-RateLimit-Bucket", "Retry-After", "X-Session-Token"} <= set(headers)
    problems = []
    for path, method, op in operations(doc):
        limited = path.startswith("/api/v1/") or path.startswith("/files/")
        for status, response in op["responses"].items():
            names = set(response.get("headers", {}))
            if limited and status[0] == "2" and "X-RateLimit-Bucket" not in names:
                problems.append(f"{method.upper()} {path} {status}: no rate-limit headers")
            if status == "429" and "Retry-After" not in names:
                problems.append(f"{method.upper()} {path} 429: no Retry-After")
            if op.get("security") and status[0] == "2" and "X-Session-Token" not in names:
                problems.append(f"{method.upper()} {path} {status}: no X-Session-Token")
            if not op.get("security") and "X-Session-Token" in names:
                problems.append(f"{method.upper()} {path} {status}: X-Session-Token without a session")
    assert not problems, "\n".join(problems)


async def test_the_documented_headers_are_the_ones_sent(client: httpx.AsyncClient, accounts: Any,
                                                        doc: dict[str, Any]) -> None:
    """The names in the document are the names on the wire (a renamed header would drift silently)."""
    alice = await accounts.register("alice")
    r = await client.get("/api/v1/users/@me", headers=alice.headers)
    assert r.status_code == 200
    documented = doc["paths"]["/api/v1/users/@me"]["get"]["responses"]["200"]["headers"]
    sent = {name for name in documented if name in r.headers}
    assert sent == set(RATE_LIMIT_NAMES), sent  # X-Session-Token only after a rotation


RATE_LIMIT_NAMES = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Reset-After",
                    "X-RateLimit-Bucket")


@pytest.mark.parametrize(("method", "path", "allowed"), [
    ("PUT", "/api/v1/channels/1/messages", {"GET", "POST"}),  # the plain routes are in front of these
    ("POST", "/api/v1/guilds/1", {"GET", "PATCH", "DELETE"}),
    ("OPTIONS", "/api/v1/channels/1/messages/2/reactions/x", {"GET", "PUT", "DELETE"}),
    ("GET", "/api/v1/users/@me/avatar", {"POST", "DELETE"}),
    # Literal segments win (over `{id}` segments, api/routing.py): /members/@me is its own path, and a method it does not
    # declare is not served through /members/{user_id} either.
    ("OPTIONS", "/api/v1/guilds/1/members/@me", {"GET", "PATCH"}),
    ("DELETE", "/api/v1/guilds/1/members/@me", {"GET", "PATCH"}),
    ("DELETE", "/api/v1/channels/1/messages/search", {"GET"}),
    ("PUT", "/api/v1/guilds/public", {"GET"}),
    # The gateway is a WebSocket route: its upgrade is a GET, any other method is refused so.
    ("TRACE", "/gateway", {"GET"}),
    ("POST", "/gateway", {"GET"}),
])
async def test_405_lists_every_method_of_the_path(client: httpx.AsyncClient, method: str, path: str,
                                                  allowed: set[str]) -> None:
    r = await client.request(method, path)
    assert r.status_code == 405, r.text
    assert r.json()["error"]["code"] == "request.method_not_allowed"
    assert set(r.headers["Allow"].split(", ")) - {"HEAD"} == allowed


async def test_literal_precedence_answers_the_same_from_memory_and_after_forgetting(
        client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """LiteralPrecedence remembers recent paths (bounded): a path answers the same the first time, when
    remembered, and after the memory was emptied; other paths still reach the router."""
    monkeypatch.setattr(LiteralPrecedence, "REMEMBERED", 2)
    guarded = [f"/api/v1/guilds/{n}/members/@me" for n in (1, 2, 3)]
    for _ in range(2):
        for path in guarded:
            r = await client.delete(path)
            assert r.status_code == 405, r.text
            assert set(r.headers["Allow"].split(", ")) - {"HEAD"} == {"GET", "PATCH"}
            assert (await client.get(path)).status_code == 401  # the route itself: authentication first
    assert (await client.delete("/api/v1/guilds/1/members/2")).status_code == 401  # not a guarded path


async def test_the_documentation_page_is_served_from_local_assets(client: httpx.AsyncClient) -> None:
    r = await client.get("/api/v1/docs")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in r.headers["content-security-policy"]
    sources = re.findall(r'(?:src|href)="([^"]+)"', r.text)
    assert sources and all("//" not in s for s in sources), sources  # nothing from another origin
    assert "<script>" not in r.text  # no inline script: the policy would block it
    for source in sources:
        asset = await client.get(f"/api/v1/{source}")
        assert asset.status_code == 200, source
        assert asset.content, source
    start = (await client.get("/api/v1/docs/docs.js")).text
    assert 'url: "openapi.json"' in start
    for unknown in ("secret.key", "..%2F..%2Fsecret.key", "__init__.py"):
        r = await client.get(f"/api/v1/docs/{unknown}")
        assert r.status_code == 404, unknown
        assert r.json()["error"]["code"] == "route.not_found"
