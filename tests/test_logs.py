"""Logs are JSON lines on stdout. Every request gives exactly one access line with its request id (the
X-Request-ID response header), method, route template, status and latency, and nothing that can carry
a credential: no headers, no query strings, no bodies, no concrete paths."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import structlog
from fastapi import APIRouter
from pydantic import BaseModel

from meadhall.db.engine import create_engine
from meadhall.db.migrate import migrate
from meadhall.logs import configure_logging

BEARER = "bearer-s3cr3t-value-0123456789"
COOKIE = "cookie-s3cr3t-value-0123456789"
QUERY_SECRET = "query-s3cr3t-value-0123456789"
PATH_SECRET = "path-s3cr3t-value-0123456789"
BODY_SECRET = "body-s3cr3t-value-0123456789"
SECRETS = (BEARER, COOKIE, QUERY_SECRET, PATH_SECRET, BODY_SECRET)

router = APIRouter()


class Login(BaseModel):
    login: str
    password: str


@router.get("/items/{item_id}")
async def get_item(item_id: str) -> dict[str, bool]:
    return {"ok": True}


@router.post("/login")
async def login(body: Login) -> dict[str, bool]:
    return {"ok": True}


@router.get("/fail/{token}")
async def fail(token: str) -> None:
    raise RuntimeError("unexpected")


@router.get("/work")
async def work() -> dict[str, bool]:
    """Stands for service code that logs while it handles a request, through structlog and through a
    standard-library logger (a driver, a library)."""
    structlog.get_logger("meadhall.test").info("service work")
    logging.getLogger("some.library").warning("library work")
    return {"ok": True}


@pytest.fixture
def backend() -> str:
    """Log lines do not depend on the database: one backend is enough."""
    return "sqlite"


@pytest.fixture
def app(app: Any) -> Any:
    app.include_router(router, prefix="/api/v1/_test")
    return app


class LogCapture:
    """The service's logging set up on pytest's captured stdout; every line written must be JSON."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self.capsys = capsys
        self.raw = ""

    def configure(self, level: str) -> LogCapture:
        configure_logging(level)
        logging.getLogger("httpx").setLevel(logging.WARNING)  # the test client's lines are not the service's
        self.capsys.readouterr()
        return self

    def lines(self) -> list[dict[str, Any]]:
        """Parsed lines written since the last call."""
        out = self.capsys.readouterr().out
        self.raw += out
        return [json.loads(line) for line in out.splitlines() if line.strip()]


@pytest.fixture
def logs(capsys: pytest.CaptureFixture[str]) -> Iterator[LogCapture]:
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    levels = {name: logging.getLogger(name).level for name in ("httpx",)}
    access_disabled = logging.getLogger("uvicorn.access").disabled
    yield LogCapture(capsys)
    structlog.reset_defaults()
    root.handlers[:] = saved[0]
    root.setLevel(saved[1])
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)
    logging.getLogger("uvicorn.access").disabled = access_disabled


def access_lines(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line for line in lines if line.get("event") == "request"]


async def test_one_access_line_per_request_with_its_fields(client: httpx.AsyncClient, logs: LogCapture) -> None:
    logs.configure("info")

    r = await client.get(f"/api/v1/_test/items/{PATH_SECRET}", params={"token": QUERY_SECRET},
                         headers={"Authorization": f"Bearer {BEARER}"}, cookies={"__Host-session": COOKIE})

    assert r.status_code == 200
    lines = logs.lines()
    access = access_lines(lines)
    assert len(access) == 1, lines
    line = access[0]
    assert line["request_id"] == r.headers["x-request-id"] and len(line["request_id"]) >= 16
    assert line["method"] == "GET"
    assert line["route"] == "/api/v1/_test/items/{item_id}"
    assert line["status"] == 200
    assert isinstance(line["latency_ms"], int | float) and 0 <= line["latency_ms"] < 10_000
    assert line["level"] == "info"
    assert line["timestamp"].endswith("Z")
    for secret in SECRETS:
        assert secret not in logs.raw
    assert "token=" not in logs.raw


async def test_request_ids_differ_between_requests(client: httpx.AsyncClient, logs: LogCapture) -> None:
    logs.configure("info")
    first = await client.get("/api/v1/meta")
    second = await client.get("/healthz")
    access = access_lines(logs.lines())
    assert [a["request_id"] for a in access] == [first.headers["x-request-id"], second.headers["x-request-id"]]
    assert first.headers["x-request-id"] != second.headers["x-request-id"]
    assert [a["route"] for a in access] == ["/api/v1/meta", "/healthz"]


async def test_bodies_are_never_logged(client: httpx.AsyncClient, logs: LogCapture) -> None:
    logs.configure("debug")
    r = await client.post("/api/v1/_test/login", json={"login": "alice", "password": BODY_SECRET})
    assert r.status_code == 200
    r = await client.post("/api/v1/_test/login", json={"login": "alice", "password": [BODY_SECRET]})
    assert r.status_code == 422
    access = access_lines(logs.lines())
    assert [(a["route"], a["status"]) for a in access] == [("/api/v1/_test/login", 200), ("/api/v1/_test/login", 422)]
    assert BODY_SECRET not in logs.raw


@pytest.mark.parametrize(("path", "status"), [
    (f"/api/v1/no-such-thing/1/{PATH_SECRET}", 404),
    # A webhook's token travels in its path: a wrong method on the execution route must not log it either.
    (f"/api/v1/webhooks/1/{PATH_SECRET}", 405),
])
async def test_unknown_route_logs_no_concrete_path(client: httpx.AsyncClient, logs: LogCapture, path: str,
                                                   status: int) -> None:
    logs.configure("info")
    r = await client.get(path, params={"token": QUERY_SECRET}, headers={"Authorization": f"Bearer {BEARER}"})
    assert r.status_code == status
    access = access_lines(logs.lines())
    assert len(access) == 1
    assert access[0]["status"] == status and access[0]["request_id"] == r.headers["x-request-id"]
    for secret in SECRETS:
        assert secret not in logs.raw


async def test_unexpected_error_logs_the_trace_with_the_request_id(client: httpx.AsyncClient,
                                                                  logs: LogCapture) -> None:
    logs.configure("info")
    r = await client.get(f"/api/v1/_test/fail/{PATH_SECRET}", params={"token": QUERY_SECRET},
                         headers={"Authorization": f"Bearer {BEARER}"})
    assert r.status_code == 500
    lines = logs.lines()
    errors = [line for line in lines if line["level"] == "error"]
    assert len(errors) == 1, lines
    assert errors[0]["request_id"] == r.headers["x-request-id"]
    assert errors[0]["route"] == "/api/v1/_test/fail/{token}"
    assert "RuntimeError: unexpected" in errors[0]["exception"]
    access = access_lines(lines)
    assert len(access) == 1 and access[0]["status"] == 500
    for secret in SECRETS:
        assert secret not in logs.raw


async def test_log_level_filters_access_lines(client: httpx.AsyncClient, logs: LogCapture) -> None:
    logs.configure("warning")
    r = await client.get("/api/v1/meta")
    assert r.status_code == 200
    assert logs.lines() == []


async def test_rejected_credentials_are_not_logged(client: httpx.AsyncClient, logs: LogCapture) -> None:
    logs.configure("debug")
    r1 = await client.get("/api/v1/users/@me", headers={"Authorization": f"Bearer {BEARER}"})
    r2 = await client.get("/api/v1/users/@me", cookies={"__Host-session": COOKIE})
    assert (r1.status_code, r2.status_code) == (401, 401)
    access = access_lines(logs.lines())
    assert [(a["route"], a["status"]) for a in access] == [("/api/v1/users/@me", 401)] * 2
    assert BEARER not in logs.raw and COOKIE not in logs.raw
    # Not even as the digest the session lookup uses: SQL statements and their parameters stay out.
    for secret in (BEARER, COOKIE):
        assert hashlib.sha256(secret.encode()).hexdigest() not in logs.raw
    assert "SELECT" not in logs.raw


async def test_standard_library_records_are_json_lines_too(logs: LogCapture, tmp_path: Path) -> None:
    """Alembic (and any other library using `logging`) writes the same JSON lines, at every level."""
    logs.configure("debug")
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'chat.db'}")
    try:
        applied = await migrate(engine)
    finally:
        await engine.dispose()
    assert applied
    lines = logs.lines()  # each line parsed as JSON
    alembic = [line for line in lines if line.get("logger", "").startswith("alembic")]
    assert alembic, lines
    assert all(line["level"] in ("debug", "info") and line["timestamp"].endswith("Z") for line in alembic)
    assert any(line["event"].startswith("Running upgrade") for line in alembic)
    assert "INSERT" not in logs.raw  # no statement logging even at debug


# ---------------------------------------------------------------- the request id in every line


async def test_lines_written_during_a_request_carry_its_id_and_client(client: httpx.AsyncClient,
                                                                    logs: LogCapture) -> None:
    logs.configure("info")
    r = await client.get("/api/v1/_test/work")
    assert r.status_code == 200
    lines = logs.lines()
    request_id = r.headers["x-request-id"]
    service = [line for line in lines if line["event"] == "service work"]
    library = [line for line in lines if line["event"] == "library work"]
    assert len(service) == 1 and len(library) == 1, lines
    for line in (*service, *library):
        assert line["request_id"] == request_id
        assert line["client_ip"] == "127.0.0.1"
    # Outside a request, nothing is left bound.
    structlog.get_logger("meadhall.test").info("after the request")
    after = [line for line in logs.lines() if line["event"] == "after the request"]
    assert len(after) == 1 and "request_id" not in after[0] and "client_ip" not in after[0]


async def test_a_client_cannot_choose_its_request_id(client: httpx.AsyncClient, logs: LogCapture) -> None:
    logs.configure("info")
    r = await client.get("/api/v1/_test/work", headers={"X-Request-ID": "forged-id-0001"})
    assert r.headers["x-request-id"] != "forged-id-0001"
    lines = logs.lines()
    assert "forged-id-0001" not in logs.raw
    assert {line["request_id"] for line in lines if "request_id" in line} == {r.headers["x-request-id"]}


@pytest.mark.parametrize("settings_overrides", [{"TRUST_PROXY": True}])
async def test_the_trusted_proxys_request_id_is_kept(client: httpx.AsyncClient, logs: LogCapture) -> None:
    logs.configure("info")
    r = await client.get("/api/v1/_test/work", headers={"X-Request-ID": "proxy-7f3a.b_c:9"})
    assert r.headers["x-request-id"] == "proxy-7f3a.b_c:9"
    service = [line for line in logs.lines() if line["event"] == "service work"]
    assert [line["request_id"] for line in service] == ["proxy-7f3a.b_c:9"]


@pytest.mark.parametrize("settings_overrides", [{"TRUST_PROXY": True}])
@pytest.mark.parametrize("incoming", ["x" * 129, "two words", "tab\there", "", "caf\u00e9"])
async def test_an_insane_request_id_is_replaced_even_behind_the_proxy(client: httpx.AsyncClient,
                                                                     incoming: str) -> None:
    r = await client.get("/api/v1/meta", headers={"X-Request-ID": incoming.encode("utf-8")})
    assert r.status_code == 200
    assert r.headers["x-request-id"] != incoming
    assert len(r.headers["x-request-id"]) == 32


@pytest.mark.parametrize("settings_overrides", [{"TRUST_PROXY": True}])
async def test_a_request_id_of_128_characters_is_kept(client: httpx.AsyncClient) -> None:
    incoming = "a" * 128
    r = await client.get("/api/v1/meta", headers={"X-Request-ID": incoming})
    assert r.headers["x-request-id"] == incoming
