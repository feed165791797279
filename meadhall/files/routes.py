"""Routes of files and image slots: parse, one service call, respond. Upload routes hand the request to
the service, which streams the multipart body itself."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Request

from meadhall.accounts import schemas as account_schemas
from meadhall.api.multipart import multipart_file
from meadhall.api.openapi import errors
from meadhall.auth.deps import Session, limited
from meadhall.files import attachments, serve, slots
from meadhall.files import schemas as s
from meadhall.files.serve import ContentResponse

router = APIRouter(tags=["files"])
content = APIRouter(tags=["files"])

UPLOAD_ERRORS = ("file.too_large", "file.unsupported_type", "auth.origin_mismatch")


def _rt(request: Request):  # type: ignore[no-untyped-def]
    return request.app.state.runtime


@router.post("/channels/{channel_id}/files", status_code=201, response_model=s.FileResponse,
             dependencies=[limited("uploads")], openapi_extra=s.UPLOAD_BODY,
             responses=errors("channel.not_found", "perm.denied", "channel.wrong_type", *UPLOAD_ERRORS))
async def upload_attachment(request: Request, channel_id: str, principal: Session) -> dict:
    return await attachments.upload_attachment(_rt(request), principal, channel_id, multipart_file(request))


@router.get("/files/{file_id}", operation_id="getFile", response_model=s.FileResponse, responses=errors("file.not_found"))
async def file_metadata(request: Request, file_id: str, principal: Session) -> dict:
    return await serve.metadata(_rt(request), principal, file_id)


@router.post("/users/@me/avatar", response_model=account_schemas.UserResponse, dependencies=[limited("uploads")],
             openapi_extra=s.IMAGE_UPLOAD_BODY, responses=errors(*UPLOAD_ERRORS))
async def set_avatar(request: Request, principal: Session) -> dict:
    rt = _rt(request)
    return await slots.set_image(rt, slots.Avatar(rt, principal), multipart_file(request),
                                 uploader_id=principal.user_id)


@router.delete("/users/@me/avatar", response_model=account_schemas.UserResponse,
               responses=errors("auth.origin_mismatch"))
async def remove_avatar(request: Request, principal: Session) -> dict:
    rt = _rt(request)
    return await slots.remove_image(rt, slots.Avatar(rt, principal))


# ---- content, outside /api/v1 -------------------------------------------------------------------

IfNoneMatch = Annotated[str | None, Header(description="An ETag from an earlier answer: 304 when unchanged")]


@content.get("/files/{file_id}", operation_id="getFileContent", status_code=200, response_class=ContentResponse, responses={**s.CONTENT_RESPONSES,
             **errors("file.not_found", "rate_limited")}, dependencies=[limited("files")])
async def file_content(request: Request, file_id: str, principal: Session, if_none_match: IfNoneMatch = None
                       ) -> ContentResponse:
    return await serve.content(_rt(request), principal, file_id, head=False, if_none_match=if_none_match)


@content.head("/files/{file_id}", operation_id="headFileContent", status_code=200, response_class=ContentResponse, responses={**s.CONTENT_RESPONSES,
              **errors("file.not_found", "rate_limited")}, dependencies=[limited("files")])
async def file_content_head(request: Request, file_id: str, principal: Session,
                            if_none_match: IfNoneMatch = None) -> ContentResponse:
    return await serve.content(_rt(request), principal, file_id, head=True, if_none_match=if_none_match)
