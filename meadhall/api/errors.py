"""One handler family that renders every failure as `{"error": {"code", "message", ...}}`."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from meadhall.core.errors import AppError


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


async def _http(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 404:
        err = AppError("route.not_found")
    elif exc.status_code == 405:
        err = AppError("request.method_not_allowed")
        if exc.headers and "Allow" in exc.headers:
            err.headers["Allow"] = exc.headers["Allow"]
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
