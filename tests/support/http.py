"""The HTTP helper: requests as an account, each asserting the status it expects (`expect=`) and showing
the response body when it differs, plus the assertions on the error envelope
(`{"error": {"code", "message", ...}}`, docs/reference/errors.md)."""

from __future__ import annotations

from typing import Any

import httpx

API = "/api/v1"


def _headers(account: Any, headers: dict[str, str] | None) -> dict[str, str]:
    return {**(account.headers if account is not None else {}), **(headers or {})}


class Api:
    """`await api.post("/guilds", owner, json={...}, expect=201)` returns the parsed body (None when empty).

    Paths are under /api/v1; `account` is anything with `.headers` (an `Account`) or None (anonymous)."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def request(self, method: str, path: str, account: Any = None, *, expect: int | None,
                      headers: dict[str, str] | None = None, **kw: Any) -> httpx.Response:
        """The response itself; its status is asserted unless `expect` is None."""
        r = await self.client.request(method, f"{API}{path}", headers=_headers(account, headers), **kw)
        if expect is not None:
            assert r.status_code == expect, f"{method} {path}: {r.status_code} != {expect}: {r.text}"
        return r

    async def call(self, method: str, path: str, account: Any = None, *, expect: int, **kw: Any) -> Any:
        r = await self.request(method, path, account, expect=expect, **kw)
        return r.json() if r.content else None

    async def get(self, path: str, account: Any = None, *, expect: int = 200, **kw: Any) -> Any:
        return await self.call("GET", path, account, expect=expect, **kw)

    async def post(self, path: str, account: Any = None, *, expect: int, **kw: Any) -> Any:
        return await self.call("POST", path, account, expect=expect, **kw)

    async def put(self, path: str, account: Any = None, *, expect: int = 204, **kw: Any) -> Any:
        return await self.call("PUT", path, account, expect=expect, **kw)

    async def patch(self, path: str, account: Any = None, *, expect: int = 200, **kw: Any) -> Any:
        return await self.call("PATCH", path, account, expect=expect, **kw)

    async def delete(self, path: str, account: Any = None, *, expect: int = 204, **kw: Any) -> Any:
        return await self.call("DELETE", path, account, expect=expect, **kw)


def unwrap(body: Any, key: str, expect: int, success: int) -> Any:
    """`body[key]` when the call succeeded as usual, else the whole body (an error envelope)."""
    return body[key] if expect == success else body


# --- the error envelope -----------------------------------------------------------------------------------

def err(r: Any) -> dict[str, Any]:
    """The `error` object of a response."""
    return r.json()["error"]


def error(r: Any) -> tuple[int, str]:
    """(status, error code) of a response."""
    return r.status_code, r.json()["error"]["code"]


def assert_error(r: Any, status: int, code: str) -> dict[str, Any]:
    assert r.status_code == status, r.text
    body = err(r)
    assert body["code"] == code, body
    return body


def invalid(r: Any, field: str) -> None:
    """422 validation.failed naming `field`, the dotted body path (an item of a list names its index,
    `attachment_ids.0`)."""
    assert r.status_code == 422, r.text
    body = err(r)
    assert body["code"] == "validation.failed"
    fields = [d["field"] for d in body["details"]]
    assert any(f == field or f.startswith(field + ".") for f in fields), body


def denied(r: Any, permission: str | None) -> None:
    """403 perm.denied naming `permission` (None: a rule such as hierarchy or ownership failed)."""
    assert r.status_code == 403, r.text
    body = err(r)
    assert body["code"] == "perm.denied"
    assert body["permission"] == permission, body


def not_found(r: Any, code: str) -> None:
    assert r.status_code == 404, r.text
    assert err(r)["code"] == code


def error_code(r: Any) -> str:
    """The error code of a response."""
    return str(r.json()["error"]["code"])
