"""Request and response models of instance administration's users (OpenAPI: listInstanceUsers,
getInstanceUser, banInstanceUser and the other operations on `/instance/users/{user_id}`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field

from meadhall.accounts.passkeys.schemas import Passkey
from meadhall.accounts.schemas import SecurityEvent, Session, User, UserSummary
from meadhall.core.text import check_single_line
from meadhall.guilds.audit.schemas import AuditEntry
from meadhall.guilds.roles.schemas import Role
from meadhall.guilds.schemas import Guild

BAN_REASON_MAX = 512
# Refused by core.text.check_single_line.
_CONTROL = "\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029"
_REASON_SCHEMA = {
    "pattern": f"^\\s*[^\\s{_CONTROL}](?:[^{_CONTROL}]{{0,{BAN_REASON_MAX - 2}}}[^\\s{_CONTROL}])?\\s*$",
    "description": f"1-{BAN_REASON_MAX} characters after trimming, on one line"}


def _ban_reason(value: str) -> str:
    value = check_single_line(value.strip())
    if not 1 <= len(value) <= BAN_REASON_MAX:
        raise ValueError(f"must be 1-{BAN_REASON_MAX} characters after trimming")
    return value


BanReason = Annotated[str, AfterValidator(_ban_reason), Field(json_schema_extra=_REASON_SCHEMA)]


class InstanceBanRequest(BaseModel):
    reason: BanReason


class AdminUser(User):
    """The User object plus the instance ban record, the soft-deletion time and two counts."""

    banned_at: str | None
    ban_reason: str | None
    banned_by: UserSummary | None
    deleted_at: str | None
    session_count: int
    guild_count: int


class AdminUserResponse(BaseModel):
    user: AdminUser


class AdminUsersResponse(BaseModel):
    users: list[AdminUser]
    total: int
    has_more: bool


class AdminServer(BaseModel):
    """One guild the user is a member of, with the roles held there."""

    guild: Guild
    roles: list[Role]
    joined_at: str


class AdminUserDetailResponse(BaseModel):
    user: AdminUser
    devices: list[Session]
    passkeys: list[Passkey]
    servers: list[AdminServer]
    security_events: list[SecurityEvent] = Field(description="the latest 50, newest first")
    audit_entries: list[AuditEntry] = Field(description="the latest 50 the user acted in or was the target of")


class TemporaryPasswordResponse(BaseModel):
    password: str = Field(description="20 characters, shown once")
