"""Routes of files: parse, one service call, respond. The upload routes live with the owners of what is
uploaded (attachments in messages, the avatar in accounts, guild images in guilds); they all hand the
multipart part to the generic flow of this package as a stream."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header

from meadhall.api.deps import RuntimeDep
from meadhall.api.openapi import errors
from meadhall.auth.deps import PrincipalDep, limited
from meadhall.files import schemas as s
from meadhall.files import serve
from meadhall.files.serve import ContentResponse

router = APIRouter(tags=["files"])
content = APIRouter(tags=["files"])


@router.get("/files/{file_id}", operation_id="getFile", summary="File Metadata", response_model=s.FileResponse,
            responses=errors("file.not_found"))
async def get_file(rt: RuntimeDep, file_id: str, principal: PrincipalDep) -> dict[str, Any]:
    return await serve.metadata(rt, principal, file_id)


# ---- content, outside /api/v1 -------------------------------------------------------------------

IfNoneMatch = Annotated[str | None, Header(description="An ETag from an earlier answer: 304 when unchanged")]


@content.get("/files/{file_id}", operation_id="getFileContent", summary="File Content", status_code=200,
             response_class=ContentResponse, responses={**s.CONTENT_RESPONSES,
             **errors("file.not_found", "rate_limited")}, dependencies=[limited("files")])
async def get_file_content(rt: RuntimeDep, file_id: str, principal: PrincipalDep, if_none_match: IfNoneMatch = None
                           ) -> ContentResponse:
    return await serve.content(rt, principal, file_id, head=False, if_none_match=if_none_match)


@content.head("/files/{file_id}", operation_id="headFileContent", summary="File Content Head", status_code=200,
              response_class=ContentResponse, responses={**s.CONTENT_RESPONSES,
              **errors("file.not_found", "rate_limited")}, dependencies=[limited("files")])
async def head_file_content(rt: RuntimeDep, file_id: str, principal: PrincipalDep,
                            if_none_match: IfNoneMatch = None) -> ContentResponse:
    return await serve.content(rt, principal, file_id, head=True, if_none_match=if_none_match)
