"""Upload bodies as they really arrive, driven through the ASGI interface chunk by chunk: a lying
`Content-Length` (too small, or too large), a client that goes away mid-upload, and the 1 MiB JSON cap
that still applies to multipart bodies sent to routes that are not uploads."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from meadhall.db.schema import files
from tests.support.personas import hall

LIMIT = 64 * 1024
BOUNDARY = "streamb"


@pytest.fixture
def settings_overrides():
    return {"MAX_UPLOAD_SIZE": LIMIT}


def parts(size: int) -> tuple[bytes, bytes]:
    head = (f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="x.bin"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n").encode()
    return head, f"\r\n--{BOUNDARY}--\r\n".encode()


async def call(app: Any, path: str, token: str, chunks: list[bytes], *, content_length: int | None,
               disconnect_after: int | None = None) -> tuple[int, bytes, int]:
    """Send `chunks` as the body; returns (status, body, chunks the app read)."""
    headers = [(b"host", b"localhost"), (b"authorization", f"Bearer {token}".encode()),
               (b"content-type", f"multipart/form-data; boundary={BOUNDARY}".encode())]
    if content_length is not None:
        headers.append((b"content-length", str(content_length).encode()))
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"", "headers": headers,
             "client": ("127.0.0.1", 50000), "server": ("localhost", 80)}
    read = 0
    answer: dict[str, Any] = {"status": None, "body": b""}

    async def receive() -> dict[str, Any]:
        nonlocal read
        if disconnect_after is not None and read >= disconnect_after:
            return {"type": "http.disconnect"}
        if read >= len(chunks):
            return {"type": "http.disconnect"}
        read += 1
        return {"type": "http.request", "body": chunks[read - 1], "more_body": read < len(chunks)}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer["status"] = message["status"]
        elif message["type"] == "http.response.body":
            answer["body"] += message.get("body", b"")

    await app(scope, receive, send)
    return answer["status"], answer["body"], read


async def rows(rt: Any) -> list[int]:
    async with rt.engine.connect() as conn:
        return [r.id for r in await conn.execute(select(files.c.id))]


async def test_a_body_larger_than_its_content_length_is_still_counted(app, client, accounts, rt, settings):
    h = await hall(client, accounts, rt)
    head, tail = parts(0)
    chunks = [head] + [b"x" * 4096] * 40 + [tail]  # 160 KiB of file after claiming 100 bytes
    status, body, read = await call(app, f"/api/v1/channels/{h.general}/files", h.a["token"], chunks,
                                    content_length=100)
    assert status == 413 and b"file.too_large" in body
    assert read < len(chunks)  # refused as soon as the file passed the limit, not after the whole body
    assert await rows(rt) == []
    assert list((settings.DATA_DIR / "files" / "tmp").iterdir()) == []


async def test_without_content_length_the_limit_still_holds(app, client, accounts, rt):
    h = await hall(client, accounts, rt)
    head, tail = parts(0)
    status, body, _ = await call(app, f"/api/v1/channels/{h.general}/files", h.a["token"],
                                 [head] + [b"x" * 4096] * 17 + [tail], content_length=None)
    assert status == 413
    exact = [head] + [b"x" * 4096] * 16 + [tail]  # exactly the limit
    status, body, _ = await call(app, f"/api/v1/channels/{h.general}/files", h.a["token"], exact,
                                 content_length=None)
    assert status == 201, body
    assert len(await rows(rt)) == 1


async def test_a_declared_length_far_above_the_limit_is_refused_before_reading(app, client, accounts, rt):
    h = await hall(client, accounts, rt)
    head, tail = parts(0)
    status, body, read = await call(app, f"/api/v1/channels/{h.general}/files", h.a["token"],
                                    [head, b"x" * 10, tail], content_length=100 * 1024 * 1024)
    assert status == 413 and b"file.too_large" in body and read == 0


async def test_a_client_that_goes_away_leaves_nothing(app, client, accounts, rt, settings):
    h = await hall(client, accounts, rt)
    head, tail = parts(0)
    chunks = [head] + [b"x" * 1024] * 10 + [tail]
    status, _, _ = await call(app, f"/api/v1/channels/{h.general}/files", h.a["token"], chunks,
                              content_length=None, disconnect_after=5)
    assert status in (None, 422)  # nobody is listening any more; an expected failure, not a 500
    assert await rows(rt) == []
    assert list((settings.DATA_DIR / "files" / "tmp").iterdir()) == []


async def test_multipart_to_other_routes_keeps_the_json_cap(app, client, accounts, rt):
    h = await hall(client, accounts, rt)
    head, tail = parts(0)
    chunks = [head] + [b"x" * 65536] * 20 + [tail]  # 1.25 MiB
    status, body, read = await call(app, f"/api/v1/channels/{h.general}/messages", h.a["token"], chunks,
                                    content_length=None)
    assert status == 413 and b"request.too_large" in body
    assert read < len(chunks)


async def test_an_image_slot_refuses_a_wrong_declared_type_before_reading_the_content(app, client, accounts, rt):
    h = await hall(client, accounts, rt)
    head = (f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="x.pdf"\r\n'
            "Content-Type: application/pdf\r\n\r\n").encode()
    chunks = [head] + [b"x" * 4096] * 50 + [f"\r\n--{BOUNDARY}--\r\n".encode()]
    status, body, read = await call(app, "/api/v1/users/@me/avatar", h.a["token"], chunks, content_length=None)
    assert status == 415 and b"file.unsupported_type" in body
    assert read == 1  # only the part headers were read
    assert await rows(rt) == []
