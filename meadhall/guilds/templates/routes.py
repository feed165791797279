"""Routes of /guild-templates (API.md 3.6): parse, one service call."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from meadhall.api.openapi import errors
from meadhall.auth.deps import Session
from meadhall.guilds.templates import service as template_service
from meadhall.guilds.templates.schemas import TemplateCreate, TemplateResponse, TemplatesResponse

templates = APIRouter(tags=["templates"])


@templates.post("/guild-templates", status_code=201, response_model=TemplateResponse,
                responses=errors("guild.not_found", "perm.denied", "template.limit_reached", "template.too_large"))
async def create_template(request: Request, body: TemplateCreate, principal: Session) -> dict:
    return await template_service.do_create_template(request.app.state.runtime, principal, int(body.guild_id), body.name,
                                         body.description)


@templates.get("/guild-templates/mine", operation_id="listMyTemplates", response_model=TemplatesResponse)
async def my_templates(request: Request, principal: Session) -> dict:
    return await template_service.access_own_templates(request.app.state.runtime, principal)


@templates.delete("/guild-templates/{template_id}", status_code=204,
                  responses=errors("template.not_found", "perm.denied"))
async def delete_template(request: Request, template_id: str, principal: Session) -> Response:
    await template_service.do_delete_template(request.app.state.runtime, principal, template_id)
    return Response(status_code=204)
