"""Cursor parameters of the list operations (the OpenAPI document): `before` / `after` (snowflakes, mutually exclusive) and `limit`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Query

from meadhall.api.openapi import ID_SCHEMA
from meadhall.core.errors import validation_error
from meadhall.core.ids import parse_id
from meadhall.core.limits import PAGE_DEFAULT, PAGE_MAX


@dataclass(frozen=True)
class Page:
    before: int | None
    after: int | None
    limit: int


def query_id(name: str, raw: str | None) -> int | None:
    """An optional id from the query string; 422 naming the parameter when malformed (docs/reference/errors.md)."""
    if raw is None:
        return None
    value = parse_id(raw)
    if value is None:
        raise validation_error(name, "must be an id")
    return value


async def page_params(
    before: Annotated[str | None, Query(description="Items older than this id", json_schema_extra=ID_SCHEMA)] = None,
    after: Annotated[str | None, Query(description="Items newer than this id", json_schema_extra=ID_SCHEMA)] = None,
    limit: Annotated[int, Query(ge=1, le=PAGE_MAX)] = PAGE_DEFAULT,
) -> Page:
    if before is not None and after is not None:
        raise validation_error("before", "before and after are mutually exclusive")
    return Page(query_id("before", before), query_id("after", after), limit)


Pagination = Annotated[Page, Depends(page_params)]


async def before_params(
    before: Annotated[str | None, Query(description="Items older than this id", json_schema_extra=ID_SCHEMA)] = None,
    limit: Annotated[int, Query(ge=1, le=PAGE_MAX)] = PAGE_DEFAULT,
) -> Page:
    """For lists that page only backwards (their OpenAPI operation names `before` and `limit`
    alone): no `after`."""
    return Page(query_id("before", before), None, limit)


BeforePagination = Annotated[Page, Depends(before_params)]
