"""Error rendering through HTTP (docs/reference/errors.md): every failure answers the envelope
`{"error": {"code", "message", ...}}` with the registered status, whatever produced it (routing, body
parsing, validation, the 1 MiB body cap, an unexpected exception)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import structlog
from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

MIB = 1024 * 1024
SECRET_IN_PATH = "tok3n-in-the-path-0123456789"


class Keys(BaseModel):
    p256dh: str = Field(min_length=1)
    auth: str = Field(min_length=1)


class Subscription(BaseModel):
    endpoint: str
    keys: Keys
    tags: list[str] = Field(default_factory=list, max_length=3)
    note: str = ""


router = APIRouter()


@router.post("/subscriptions")
async def create_subscription(body: Subscription) -> dict[str, Any]:
    return {"endpoint": body.endpoint, "note_length": len(body.note)}


@router.get("/items")
async def list_items(limit: int = Query(50, ge=1, le=100)) -> dict[str, int]:
    return {"limit": limit}


@router.get("/boom/{token}")
async def boom(token: str) -> None:
    raise RuntimeError("kaboom with secret internals")


@pytest.fixture
def app(app: Any) -> Any:
    """The service app plus routes that exercise body, query and exception handling."""
    app.include_router(router, prefix="/api/v1/_test")
    return app


def assert_envelope(r: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert list(body) == ["error"], body
    error = body["error"]
    assert error["code"] == code
    assert isinstance(error["message"], str) and error["message"]
    return error


def fields(error: dict[str, Any]) -> list[str]:
    return [d["field"] for d in error["details"]]


# ---- routing -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/api/v1/no-such-thing", "/no-such-page", "/api/v1/_test/items/extra"])
async def test_unknown_route_is_route_not_found(client: httpx.AsyncClient, path: str) -> None:
    error = assert_envelope(await client.get(path), 404, "route.not_found")
    assert set(error) == {"code", "message"}


@pytest.mark.parametrize(("method", "path"), [("POST", "/healthz"), ("DELETE", "/api/v1/meta"),
                                               ("GET", "/api/v1/_test/subscriptions")])
async def test_wrong_method_is_method_not_allowed(client: httpx.AsyncClient, method: str, path: str) -> None:
    r = await client.request(method, path)
    assert_envelope(r, 405, "request.method_not_allowed")
    assert method not in r.headers["allow"]


# ---- request validation ------------------------------------------------------------------------------


@pytest.mark.parametrize("raw", [b'{"endpoint": "https://push.example/1", ', b"not json at all", b'{"a": 1}}'])
async def test_malformed_json_is_validation_failed_on_body(client: httpx.AsyncClient, raw: bytes) -> None:
    r = await client.post("/api/v1/_test/subscriptions", content=raw, headers={"content-type": "application/json"})
    error = assert_envelope(r, 422, "validation.failed")
    assert fields(error) == ["body"]
    assert all(isinstance(d["message"], str) and d["message"] for d in error["details"])


async def test_missing_body_is_validation_failed(client: httpx.AsyncClient) -> None:
    r = await client.post("/api/v1/_test/subscriptions", headers={"content-type": "application/json"})
    error = assert_envelope(r, 422, "validation.failed")
    assert fields(error) == ["body"]


async def test_nested_body_field_is_reported_with_its_dotted_path(client: httpx.AsyncClient) -> None:
    r = await client.post("/api/v1/_test/subscriptions",
                          json={"endpoint": "https://push.example/1", "keys": {"auth": "a"}})
    error = assert_envelope(r, 422, "validation.failed")
    assert fields(error) == ["keys.p256dh"]
    assert "keys.p256dh" in error["message"]


async def test_every_failing_field_is_listed(client: httpx.AsyncClient) -> None:
    r = await client.post("/api/v1/_test/subscriptions",
                          json={"keys": {"p256dh": "", "auth": 5}, "tags": ["a", 7]})
    error = assert_envelope(r, 422, "validation.failed")
    assert sorted(fields(error)) == ["endpoint", "keys.auth", "keys.p256dh", "tags.1"]


async def test_wrong_top_level_type_is_reported_on_body(client: httpx.AsyncClient) -> None:
    r = await client.post("/api/v1/_test/subscriptions", json=["not", "an", "object"])
    error = assert_envelope(r, 422, "validation.failed")
    assert fields(error) == ["body"]


@pytest.mark.parametrize("value", ["abc", "0", "101"])
async def test_query_parameter_failure_names_the_parameter(client: httpx.AsyncClient, value: str) -> None:
    r = await client.get("/api/v1/_test/items", params={"limit": value})
    error = assert_envelope(r, 422, "validation.failed")
    assert fields(error) == ["limit"]


async def test_valid_requests_pass(client: httpx.AsyncClient) -> None:
    r = await client.get("/api/v1/_test/items", params={"limit": "7"})
    assert r.status_code == 200 and r.json() == {"limit": 7}
    r = await client.post("/api/v1/_test/subscriptions",
                          json={"endpoint": "https://push.example/1", "keys": {"p256dh": "p", "auth": "a"}})
    assert r.status_code == 200 and r.json()["endpoint"] == "https://push.example/1"


# ---- the 1 MiB JSON body cap -------------------------------------------------------------------------


def body_of_size(size: int) -> bytes:
    """A valid subscription JSON document of exactly `size` bytes."""
    head = b'{"endpoint": "https://push.example/1", "keys": {"p256dh": "p", "auth": "a"}, "note": "'
    tail = b'"}'
    raw = head + b"x" * (size - len(head) - len(tail)) + tail
    assert len(raw) == size
    return raw


async def chunks(raw: bytes, size: int = 64 * 1024) -> AsyncIterator[bytes]:
    for i in range(0, len(raw), size):
        yield raw[i:i + size]


async def test_body_of_exactly_one_mib_is_accepted(client: httpx.AsyncClient) -> None:
    r = await client.post("/api/v1/_test/subscriptions", content=body_of_size(MIB),
                          headers={"content-type": "application/json"})
    assert r.status_code == 200, r.text
    assert r.json()["note_length"] > MIB - 200


async def test_body_over_one_mib_with_content_length_is_too_large(client: httpx.AsyncClient) -> None:
    raw = body_of_size(MIB + 1)
    r = await client.post("/api/v1/_test/subscriptions", content=raw, headers={"content-type": "application/json"})
    assert r.request.headers["content-length"] == str(MIB + 1)
    assert_envelope(r, 413, "request.too_large")


async def test_chunked_body_over_one_mib_is_too_large(client: httpx.AsyncClient) -> None:
    r = await client.post("/api/v1/_test/subscriptions", content=chunks(body_of_size(MIB + 1)),
                          headers={"content-type": "application/json"})
    assert "content-length" not in r.request.headers
    assert r.request.headers["transfer-encoding"] == "chunked"
    assert_envelope(r, 413, "request.too_large")


async def test_chunked_body_under_the_cap_is_accepted(client: httpx.AsyncClient) -> None:
    r = await client.post("/api/v1/_test/subscriptions", content=chunks(body_of_size(MIB - 10)),
                          headers={"content-type": "application/json"})
    assert r.status_code == 200, r.text


async def test_oversized_garbage_is_rejected_for_its_size_not_parsed(client: httpx.AsyncClient) -> None:
    """A huge body of garbage is rejected for its size, not parsed."""
    r = await client.post("/api/v1/_test/subscriptions", content=chunks(b"{" * (2 * MIB)),
                          headers={"content-type": "application/json"})
    assert_envelope(r, 413, "request.too_large")


# ---- unexpected failures -----------------------------------------------------------------------------


async def test_unexpected_exception_is_internal_error_without_internals(client: httpx.AsyncClient) -> None:
    with structlog.testing.capture_logs() as logs:
        r = await client.get(f"/api/v1/_test/boom/{SECRET_IN_PATH}")

    error = assert_envelope(r, 500, "internal.error")
    for leak in ("Traceback", "RuntimeError", "kaboom", "secret internals", SECRET_IN_PATH, "File \""):
        assert leak not in r.text
    request_id = r.headers["x-request-id"]
    assert request_id
    # The envelope may carry the request id so that a user can quote it; nothing else.
    assert set(error) <= {"code", "message", "request_id"}
    if "request_id" in error:
        assert error["request_id"] == request_id

    failures = [e for e in logs if e["log_level"] == "error"]
    assert len(failures) == 1, logs
    assert failures[0]["request_id"] == request_id
    assert failures[0].get("exc_info"), "the trace must be logged"
    # The concrete path can carry credentials (webhook tokens): logs name the route template only.
    assert failures[0]["route"] == "/api/v1/_test/boom/{token}"
    assert SECRET_IN_PATH not in json.dumps({k: v for k, v in failures[0].items() if k != "exc_info"}, default=str)
    access = [e for e in logs if e["event"] == "request"]
    assert len(access) == 1 and access[0]["request_id"] == request_id and access[0]["status"] == 500


async def test_the_service_keeps_answering_after_an_unexpected_exception(client: httpx.AsyncClient) -> None:
    with structlog.testing.capture_logs():  # keeps the trace off the test output
        assert (await client.get("/api/v1/_test/boom/x")).status_code == 500
    r = await client.get("/healthz")
    assert r.status_code == 200 and r.json() == {"status": "ok"}
