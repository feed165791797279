"""Routes of /guild-templates: parse, one service call."""

from __future__ import annotations

from fastapi import APIRouter, Response

from meadhall.api.deps import RuntimeDep
from meadhall.api.openapi import errors
from meadhall.auth.deps import PrincipalDep
from meadhall.guilds.templates import service as template_service
from meadhall.guilds.templates.schemas import TemplateCreate, TemplateResponse, TemplatesResponse

templates = APIRouter(tags=["templates"])


@templates.post("/guild-templates", status_code=201, response_model=TemplateResponse,
                responses=errors("guild.not_found", "perm.denied", "template.limit_reached", "template.too_large"))
async def create_template(rt: RuntimeDep, body: TemplateCreate, principal: PrincipalDep) -> dict:
    return await template_service.do_create_template(rt, principal, int(body.guild_id), body.name,
                                         body.description)


@templates.get("/guild-templates/mine", operation_id="listMyTemplates", response_model=TemplatesResponse)
async def my_templates(rt: RuntimeDep, principal: PrincipalDep) -> dict:
    return await template_service.access_own_templates(rt, principal)


@templates.delete("/guild-templates/{template_id}", status_code=204,
                  responses=errors("template.not_found", "perm.denied"))
async def delete_template(rt: RuntimeDep, template_id: str, principal: PrincipalDep) -> Response:
    await template_service.do_delete_template(rt, principal, template_id)
    return Response(status_code=204)
