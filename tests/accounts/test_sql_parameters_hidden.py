"""A request that fails inside the database logs its trace, but never the statement's bound values:
they carry password and token hashes, encrypted fields and user input (db/engine.py hide_parameters)."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from typing import Any

import pytest
import structlog

from meadhall.auth import queries
from meadhall.logs import configure_logging

SECRET_AGENT = "agent-s3cr3t-value-0123456789"


@pytest.fixture
def log_stream() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    stream = io.StringIO()
    configure_logging("debug", stream=stream)
    try:
        yield stream
    finally:
        structlog.reset_defaults()
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
        logging.getLogger("uvicorn.access").disabled = False


async def test_a_database_error_is_logged_without_its_parameters(client, monkeypatch, log_stream):
    inserted: list[dict[str, Any]] = []
    insert_session = queries.insert_session

    async def insert_twice(conn: Any, row: dict[str, Any]) -> None:
        # The second insert repeats the primary key: a real IntegrityError raised by the database,
        # whose statement carries the session's token digest and the client's User-Agent.
        inserted.append(row)
        await insert_session(conn, row)
        await insert_session(conn, row)

    monkeypatch.setattr(queries, "insert_session", insert_twice)
    r = await client.post(
        "/api/v1/auth/register",
        json={"username": "alice", "email": "alice@example.com", "password": "correct horse battery staple"},
        headers={"User-Agent": SECRET_AGENT},
    )
    assert r.status_code == 500
    out = log_stream.getvalue()
    assert "IntegrityError" in out  # the failure itself is logged, with its trace
    assert "INSERT INTO sessions" in out
    assert SECRET_AGENT not in out
    [row] = inserted
    assert row["token_hash"] not in out
