"""Request and response models of instance administration's servers (OpenAPI: listInstanceGuilds,
updateInstanceGuild)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator

from meadhall.accounts.schemas import UserSummary
from meadhall.admin.settings.nulls import refuse_null
from meadhall.api.openapi import not_null
from meadhall.guilds.schemas import Guild, GuildName


class AdminGuild(Guild):
    """The Guild object plus its owner."""

    owner: UserSummary


class AdminGuildsResponse(BaseModel):
    guilds: list[AdminGuild]
    total: int
    has_more: bool


class InstanceGuildPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Absent means unchanged; null is refused (as for the owner's PATCH).
    name: GuildName | None = Field(None, json_schema_extra=not_null)
    is_main: StrictBool | None = Field(None, json_schema_extra=not_null)

    _not_null = field_validator("*", mode="before")(refuse_null)

    def changes(self) -> dict[str, object]:
        return {n: getattr(self, n) for n in self.model_fields_set}
