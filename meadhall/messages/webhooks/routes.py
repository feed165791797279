"""Routes of room webhooks and their execution: parse, one service call (docs/webhooks.md)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request, Response
from fastapi.responses import JSONResponse

from meadhall.api.deps import RuntimeDep, runtime_of
from meadhall.api.limits import remember
from meadhall.api.multipart import multipart_file
from meadhall.api.openapi import errors, rules
from meadhall.api.plain import json_response
from meadhall.auth.deps import PrincipalDep, limited
from meadhall.files import slots
from meadhall.files.schemas import IMAGE_UPLOAD_BODY, UPLOAD_ERRORS
from meadhall.messages.schemas import MessageResponse
from meadhall.messages.webhooks import execute, service
from meadhall.messages.webhooks import schemas as s
from meadhall.messages.webhooks.avatar import WebhookAvatar

router = APIRouter(tags=["webhooks"])
# Execution has no session: its own tag keeps it apart from the management operations.
execution = APIRouter(tags=["webhook execution"])

_SEEN = ("webhook.not_found", "perm.denied")
Token = Annotated[str, Path(description="The webhook's token, shown once when it was made",
                            max_length=128)]


@router.get("/channels/{channel_id}/webhooks", response_model=s.WebhooksResponse,
            responses=errors("channel.not_found", "perm.denied"))
async def list_channel_webhooks(rt: RuntimeDep, channel_id: str, principal: PrincipalDep) -> dict[str, Any]:
    return await service.access_channel_webhooks(rt, principal, channel_id)


@router.post("/channels/{channel_id}/webhooks", status_code=201, response_model=s.WebhookResponse,
             responses=errors("channel.not_found", "perm.denied", "auth.step_up_required", "channel.wrong_type",
                              "webhook.limit_reached"))
async def create_webhook(rt: RuntimeDep, channel_id: str, body: s.WebhookCreate, principal: PrincipalDep
                         ) -> dict[str, Any]:
    return await service.do_create_webhook(rt, principal, channel_id, body.name)


@router.get("/guilds/{guild_id}/webhooks", response_model=s.WebhooksResponse,
            responses=errors("guild.not_found", "perm.denied"))
async def list_guild_webhooks(rt: RuntimeDep, guild_id: str, principal: PrincipalDep) -> dict[str, Any]:
    return await service.access_guild_webhooks(rt, principal, guild_id)


@router.get("/webhooks/{webhook_id}", response_model=s.WebhookResponse, responses=errors(*_SEEN))
async def get_webhook(rt: RuntimeDep, webhook_id: str, principal: PrincipalDep) -> dict[str, Any]:
    return await service.access_one_webhook(rt, principal, webhook_id)


@router.patch("/webhooks/{webhook_id}", response_model=s.WebhookResponse,
              responses=errors(*_SEEN, "channel.not_found", "channel.wrong_type", "webhook.limit_reached"))
async def update_webhook(rt: RuntimeDep, webhook_id: str, body: s.WebhookPatch, principal: PrincipalDep
                         ) -> dict[str, Any]:
    return await service.do_update_webhook(rt, principal, webhook_id, body.name, body.channel_id)


@router.delete("/webhooks/{webhook_id}", status_code=204, responses=errors(*_SEEN))
async def delete_webhook(rt: RuntimeDep, webhook_id: str, principal: PrincipalDep) -> Response:
    await service.do_delete_webhook(rt, principal, webhook_id)
    return Response(status_code=204)


@router.post("/webhooks/{webhook_id}/token", operation_id="regenerateWebhookToken", summary="Regenerate Webhook Token",
             response_model=s.WebhookResponse, responses=errors(*_SEEN, "auth.step_up_required"))
async def regenerate_webhook_token(rt: RuntimeDep, webhook_id: str, principal: PrincipalDep) -> dict[str, Any]:
    return await service.do_regenerate_token(rt, principal, webhook_id)


@router.post("/webhooks/{webhook_id}/avatar", response_model=s.WebhookResponse, dependencies=[limited("uploads")],
             openapi_extra=IMAGE_UPLOAD_BODY, responses=errors(*_SEEN, *UPLOAD_ERRORS))
async def set_webhook_avatar(request: Request, rt: RuntimeDep, webhook_id: str, principal: PrincipalDep) -> Any:
    return await slots.set_image(rt, WebhookAvatar(principal, webhook_id), multipart_file(request),
                                 uploader_id=principal.user_id)


@router.delete("/webhooks/{webhook_id}/avatar", response_model=s.WebhookResponse, responses=errors(*_SEEN))
async def remove_webhook_avatar(rt: RuntimeDep, webhook_id: str, principal: PrincipalDep) -> Any:
    return await slots.remove_image(rt, WebhookAvatar(principal, webhook_id))


async def execute_rate(request: Request, webhook_id: str, token: Token) -> None:
    """The token first (404), then the webhook's `webhooks.execute` bucket (429)."""
    remember(request, await execute.check_execute_rate(runtime_of(request), webhook_id, token))


@execution.post("/webhooks/{webhook_id}/{token}", status_code=201, response_model=MessageResponse,
                dependencies=[Depends(execute_rate)],
                openapi_extra=rules({"content": "text that is not only white space, or at least one attachment",
                                     "attachment_ids": "unsent uploads of the webhook's creator to its room, "
                                                       "each once"}),
                responses=errors("webhook.not_found", "rate_limited"))
async def execute_webhook(rt: RuntimeDep, webhook_id: str, token: Token, body: s.WebhookExecute) -> JSONResponse:
    request = execute.Execution(body.content, body.username, body.avatar_url, body.attachment_ids)
    message = await execute.do_execute_webhook(rt, webhook_id, token, request)
    return json_response({"message": message}, status_code=201)
