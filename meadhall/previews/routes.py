"""The link-preview route (docs/outbound.md): parse, one service call."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from pydantic import AfterValidator

from meadhall.api.deps import RuntimeDep
from meadhall.api.limits import remember
from meadhall.api.openapi import errors, rules
from meadhall.auth.deps import PrincipalDep
from meadhall.core.limits import LINK_PREVIEW_URL_LENGTH
from meadhall.core.text import check_single_line
from meadhall.previews import schemas as s
from meadhall.previews import service

router = APIRouter(tags=["link previews"])


@router.get("/link-previews", response_model=s.LinkPreview,
            openapi_extra=rules({"url": "an absolute URL (another scheme than http or https answers `blocked`)"}),
            responses=errors("link_preview.disabled"))
async def get_link_preview(request: Request, rt: RuntimeDep, principal: PrincipalDep,
                           url: Annotated[str, Query(min_length=1, max_length=LINK_PREVIEW_URL_LENGTH),
                                          AfterValidator(check_single_line)]) -> dict:
    """A card for `url`: cached answers are free; a fetch takes one token of `link_previews` (20 a minute)."""
    preview, decision = await service.access_link_preview(rt, principal, url)
    if decision is not None:
        remember(request, decision)
    return preview
