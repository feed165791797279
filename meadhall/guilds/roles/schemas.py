"""Request and response models of role routes (the OpenAPI source)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, Field, StringConstraints, model_validator

from meadhall.api.openapi import not_null
from meadhall.core.text import check_single_line
from meadhall.guilds.schemas import PermissionString, Snowflake, no_nulls

RoleName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100),
                     AfterValidator(check_single_line)]
Color = Annotated[int, Field(ge=0, le=16_777_215)]


class RoleCreate(BaseModel):
    name: RoleName
    color: Color = 0
    permissions: PermissionString = 0
    hoist: bool = False
    frame_id: Snowflake | None = None
    icon_id: Snowflake | None = None

    def values(self) -> dict[str, Any]:
        return {"name": self.name, "color": self.color, "permissions": int(self.permissions), "hoist": self.hoist,
                "frame_id": self.frame_id, "icon_id": self.icon_id}


class RolePatch(BaseModel):
    # not_null: absent means unchanged; null is refused for these (the document says so).
    name: RoleName | None = Field(None, json_schema_extra=not_null)
    color: Color | None = Field(None, json_schema_extra=not_null)
    permissions: PermissionString | None = Field(None, json_schema_extra=not_null)
    hoist: bool | None = Field(None, json_schema_extra=not_null)
    frame_id: Snowflake | None = None
    icon_id: Snowflake | None = None

    @model_validator(mode="after")
    def _nulls(self) -> RolePatch:
        no_nulls(self, ("name", "color", "permissions", "hoist"))
        return self

    def changes(self) -> dict[str, Any]:
        out: dict[str, Any] = {n: getattr(self, n) for n in self.model_fields_set}
        if "permissions" in out:
            out["permissions"] = int(out["permissions"])
        return out


class RoleMove(BaseModel):
    id: Snowflake
    position: Annotated[int, Field(ge=0, le=10_000)]


class RoleReorder(BaseModel):
    roles: Annotated[list[RoleMove], Field(min_length=1, max_length=250)]

    def moves(self) -> list[dict[str, Any]]:
        return [{"id": m.id, "position": m.position} for m in self.roles]


class Role(BaseModel):
    id: str
    guild_id: str
    name: str
    color: int
    position: int
    permissions: str
    hoist: bool
    frame_id: str | None
    icon_id: str | None
    is_default: bool


class RoleResponse(BaseModel):
    role: Role


class RolesResponse(BaseModel):
    roles: list[Role]

