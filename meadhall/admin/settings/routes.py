"""Routes of instance administration: settings (docs/admin.md, "Media limits"). Parse, one service call."""

from __future__ import annotations

from fastapi import APIRouter

from meadhall.admin.settings import schemas as s
from meadhall.admin.settings import service
from meadhall.api.deps import RuntimeDep
from meadhall.api.openapi import errors
from meadhall.auth.deps import PrincipalDep

router = APIRouter(tags=["instance"])


@router.get("/instance/settings", operation_id="getInstanceSettings", response_model=s.InstanceSettingsResponse,
            responses=errors("perm.denied"))
async def get_instance_settings(rt: RuntimeDep, principal: PrincipalDep) -> dict:
    return await service.access_instance_settings(rt, principal)


@router.patch("/instance/settings", operation_id="updateInstanceSettings",
              response_model=s.InstanceSettingsResponse, responses=errors("perm.denied"))
async def update_instance_settings(rt: RuntimeDep, body: s.InstanceSettingsPatch, principal: PrincipalDep) -> dict:
    return await service.do_update_instance_settings(rt, principal, body.media_limit_changes())
