"""Typed FastAPI dependencies shared by every domain's routes. The caller's identity is `PrincipalDep`
in `meadhall.auth.deps`; this module holds what needs no authentication."""

from __future__ import annotations

from typing import Annotated, cast

from fastapi import Depends, Request

from meadhall.runtime import Runtime


def runtime_of(request: Request) -> Runtime:
    """The process's runtime, built once by create_app and kept on the application state."""
    return cast(Runtime, request.app.state.runtime)


RuntimeDep = Annotated[Runtime, Depends(runtime_of)]
