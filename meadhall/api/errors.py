"""One handler family that renders every failure as `{"error": {"code", "message", ...}}`."""

from __future__ import annotations

import errno
import socket
import sqlite3
import sys
from typing import Any

import sqlalchemy.exc as sa_errors
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from meadhall.api.routing import allowed_methods
from meadhall.core.errors import AppError

# Seconds a client is asked to wait after 503 `service.unavailable`: long enough for a restarted Redis or
# PostgreSQL, or a failover, to come back.
UNAVAILABLE_RETRY_AFTER = 5

# Local file-system failures are OSErrors too, but they are not an unreachable dependency.
_FILE_ERRORS = (FileNotFoundError, FileExistsError, PermissionError, IsADirectoryError, NotADirectoryError)


def _driver_errors(exc: BaseException) -> bool:
    """Whether `exc` is one of the Redis or asyncpg errors of an unreachable server. The drivers are looked up,
    not imported: a node without Redis, or on SQLite, never loads them (some 9 MiB), and an error of a
    driver that was never loaded cannot have happened."""
    redis_errors = sys.modules.get("redis.exceptions")
    if redis_errors is not None and isinstance(exc, redis_errors.ConnectionError | redis_errors.TimeoutError):
        return True  # Redis unreachable, refused, hung (socket timeout), or reset mid-command
    asyncpg = sys.modules.get("asyncpg")
    return asyncpg is not None and isinstance(exc, asyncpg.PostgresConnectionError | asyncpg.CannotConnectNowError
                                              | asyncpg.TooManyConnectionsError | asyncpg.InterfaceError)


# SQLite's "database or disk is full" (SQLITE_FULL, also what `max_page_count` raises) and the file system's
# ENOSPC / EDQUOT. The answer names the cause: the operator must free space, the client can only wait.
_SQLITE_FULL = 13
_DISK_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
DISK_FULL_MESSAGE = "The server's disk is full: nothing was stored. Try again later"


def _is_disk_full(exc: BaseException) -> bool:
    if isinstance(exc, sqlite3.Error):
        return getattr(exc, "sqlite_errorcode", None) == _SQLITE_FULL or "disk is full" in str(exc)
    return isinstance(exc, OSError) and exc.errno in _DISK_FULL_ERRNOS


# SQLite's I/O errors (SQLITE_IOERR and its extended codes): the file system refused a read, write or sync (a full
# or failing disk, a file system remounted read-only). The request stored nothing; the operator must act.
_SQLITE_IOERR = 10


def _is_outage(exc: BaseException) -> bool:
    if isinstance(exc, sqlite3.Error):
        return (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF == _SQLITE_IOERR
    if _driver_errors(exc):
        return True
    if isinstance(exc, sa_errors.TimeoutError):
        return True  # no pooled database connection came free in time
    if isinstance(exc, sa_errors.DBAPIError) and exc.connection_invalidated:
        return True  # the database dropped the connection
    if isinstance(exc, TimeoutError | ConnectionError | socket.gaierror):
        return True  # connect refused or timed out (asyncpg raises these unwrapped at connect)
    return isinstance(exc, OSError) and not isinstance(exc, _FILE_ERRORS)


def outage(exc: BaseException) -> AppError | None:
    """503 `service.unavailable` (with Retry-After) when `exc` means that a dependency (database, Redis)
    is down, hung or unreachable, or that the disk is full (docs/operations.md, "Outages"); None for any
    other failure. Drivers wrap their errors
    (SQLAlchemy around asyncpg, redis-py around sockets), so the causes are inspected too."""
    seen = 0
    current: BaseException | None = exc
    while current is not None and seen < 6:
        if _is_disk_full(current):
            err = AppError("service.unavailable", DISK_FULL_MESSAGE)
            err.headers["Retry-After"] = str(UNAVAILABLE_RETRY_AFTER)
            return err
        if _is_outage(current):
            err = AppError("service.unavailable")
            err.headers["Retry-After"] = str(UNAVAILABLE_RETRY_AFTER)
            return err
        orig = getattr(current, "orig", None)  # SQLAlchemy's DBAPIError keeps the driver's error here
        current = orig if isinstance(orig, BaseException) else (current.__cause__ or current.__context__)
        seen += 1
    return None


def error_response(err: AppError) -> JSONResponse:
    headers = dict(err.headers)
    return JSONResponse(err.body(), status_code=err.status, headers=headers)


def _field(loc: tuple[Any, ...] | list[Any]) -> str:
    parts = list(loc)
    if parts and parts[0] in ("body", "query", "path", "header", "cookie"):
        where = parts.pop(0)
        if not parts:
            return "body" if where == "body" else where
    return ".".join(str(p) for p in parts) or "body"


def validation_details(exc: RequestValidationError) -> list[dict[str, str]]:
    details = []
    for err in exc.errors():
        if err.get("type") == "json_invalid":
            details.append({"field": "body", "message": "malformed JSON"})
            continue
        message = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        details.append({"field": _field(err.get("loc", ())), "message": message})
    return details


async def _app_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, AppError)
    return error_response(exc)


async def _validation(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    details = validation_details(exc)
    first = details[0] if details else {"field": "body", "message": "invalid"}
    err = AppError("validation.failed", f"{first['field']}: {first['message']}", details=details)
    return error_response(err)


async def _http(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 404:
        err = AppError("route.not_found")
    elif exc.status_code == 405:
        err = AppError("request.method_not_allowed")
        # Starlette names only the methods of the first route that matched the path; Allow lists them all.
        err.headers["Allow"] = ", ".join(allowed_methods(request.app, request.url.path))
    elif exc.status_code == 413:
        err = AppError("request.too_large")
    elif exc.status_code in (400, 422):
        err = AppError("validation.failed", str(exc.detail), details=[{"field": "body", "message": str(exc.detail)}])
    else:
        err = AppError("internal.error")
    return error_response(err)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(AppError, _app_error)
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(StarletteHTTPException, _http)
