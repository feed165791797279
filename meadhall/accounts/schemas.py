"""Request and response models of the account routes (the OpenAPI source)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from meadhall.accounts import field_schemas as fs
from meadhall.accounts import validation as v
from meadhall.api.openapi import not_null
from meadhall.core.text import check_multiline, check_single_line

# json_schema_extra states in the OpenAPI document what the validator accepts (accounts/field_schemas.py).
Username = Annotated[str, AfterValidator(v.check_username), Field(json_schema_extra=fs.USERNAME_SCHEMA)]
Email = Annotated[str, AfterValidator(v.check_email), Field(json_schema_extra=fs.EMAIL_SCHEMA)]
DisplayName = Annotated[str, AfterValidator(v.check_display_name), Field(json_schema_extra=fs.DISPLAY_NAME_SCHEMA)]
Locale = Annotated[str, AfterValidator(v.check_locale), Field(json_schema_extra=fs.LOCALE_SCHEMA)]
Timezone = Annotated[str, AfterValidator(v.check_timezone), Field(json_schema_extra=fs.timezone_schema())]
Bio = Annotated[str, StringConstraints(max_length=500), AfterValidator(check_multiline)]
CustomStatus = Annotated[str, StringConstraints(strip_whitespace=True, max_length=128),
                         AfterValidator(check_single_line)]
StatusEmoji = Annotated[str, AfterValidator(v.check_custom_status_emoji), Field(json_schema_extra=fs.STATUS_EMOJI_SCHEMA)]
Password = Annotated[str, StringConstraints(max_length=1024)]
# A password being set: the service checks it (accounts/passwords.py), the document states its lengths.
NewPassword = Annotated[str, StringConstraints(max_length=1024), Field(json_schema_extra=fs.NEW_PASSWORD_SCHEMA)]
Code = Annotated[str, StringConstraints(max_length=64), AfterValidator(check_single_line)]


# ---- requests ----------------------------------------------------------------------------------


class RegisterRequest(BaseModel):
    username: Username
    email: Email
    password: NewPassword
    display_name: DisplayName | None = None
    locale: Locale | None = None
    timezone: Timezone | None = None


class LoginRequest(BaseModel):
    login: Annotated[str, StringConstraints(min_length=1, max_length=254), AfterValidator(check_single_line)]
    password: Password
    totp_code: Code | None = None
    backup_code: Code | None = None


class StepUpRequest(BaseModel):
    """The password (and a second factor when 2FA is on), or a passkey: `ceremony_id` of
    `POST /auth/passkeys/login/options` and the `credential` one of the caller's keys made for it."""

    model_config = ConfigDict(json_schema_extra={"anyOf": [
        {"required": ["password"], "properties": {"password": {"type": "string"}}},
        {"required": ["ceremony_id", "credential"],
         "properties": {"ceremony_id": {"type": "string"}, "credential": {"type": "object"}}}]})

    password: Password | None = None
    totp_code: Code | None = None
    backup_code: Code | None = None
    ceremony_id: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = None
    credential: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _one_way(self) -> StepUpRequest:
        if self.password is None and (self.ceremony_id is None or self.credential is None):
            raise ValueError("password, or ceremony_id and credential, is required")
        return self

    @property
    def by_passkey(self) -> bool:
        return self.ceremony_id is not None and self.credential is not None


class PasswordRequest(BaseModel):
    new_password: NewPassword


class TotpCodeRequest(BaseModel):
    totp_code: Code


class DisableTwoFactorRequest(BaseModel):
    # One code is required: an empty one counts as none.
    model_config = ConfigDict(json_schema_extra={"anyOf": [
        {"required": [name], "properties": {name: {"type": "string", "minLength": 1}}}
        for name in ("totp_code", "backup_code")]})

    totp_code: Code | None = None
    backup_code: Code | None = None

    @model_validator(mode="after")
    def _one_code(self) -> DisableTwoFactorRequest:
        if not (self.totp_code or self.backup_code):
            raise ValueError("totp_code or backup_code is required")
        return self


class ProfilePatch(BaseModel):
    """Absent = unchanged; null clears custom_status / custom_status_emoji (docs/reference/errors.md)."""

    # not_null: absent means unchanged, but null is refused for these (the document says so).
    display_name: DisplayName | None = Field(None, json_schema_extra=not_null)
    bio: Bio | None = Field(None, json_schema_extra=not_null)
    status: Literal["online", "idle", "dnd", "invisible"] | None = Field(None, json_schema_extra=not_null)
    custom_status: CustomStatus | None = None
    custom_status_emoji: StatusEmoji | None = None
    locale: Locale | None = Field(None, json_schema_extra=not_null)
    timezone: Timezone | None = Field(None, json_schema_extra=not_null)

    @field_validator("display_name", "bio", "status", "locale", "timezone", mode="before")
    @classmethod
    def _no_null_for_required(cls, value: object) -> object:
        # Runs only for fields present in the body, so the error names the field (docs/reference/errors.md).
        if value is None:
            raise ValueError("cannot be null")
        return value

    def changes(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self.model_fields_set}


class OnboardingRequest(BaseModel):
    display_name: DisplayName
    bio: Bio | None = None
    locale: Locale | None = None

    def changes(self) -> dict[str, object]:
        return {n: getattr(self, n) for n in self.model_fields_set if getattr(self, n) is not None}


# ---- responses ---------------------------------------------------------------------------------


class User(BaseModel):
    id: str
    username: str
    email: str
    display_name: str
    bio: str
    status: str
    custom_status: str | None
    custom_status_emoji: str | None
    locale: str
    timezone: str
    totp_enabled: bool
    onboarding_completed_at: str | None
    is_instance_admin: bool
    badges: list[str]
    avatar: str | None
    last_seen_at: str | None
    password_reset_required: bool
    created_at: str


class UserSummary(BaseModel):
    id: str
    username: str
    display_name: str
    avatar: str | None
    bio: str
    status: str
    custom_status: str | None
    custom_status_emoji: str | None
    badges: list[str]
    created_at: str
    deleted: bool


class Session(BaseModel):
    id: str
    created_at: str
    last_used_at: str
    expires_at: str
    ip: str
    user_agent: str | None
    method: str
    current: bool
    step_up_expires_at: str | None


class SecurityEvent(BaseModel):
    id: str
    user_id: str | None
    type: str
    ip: str
    user_agent: str | None
    data: dict[str, object]
    created_at: str


class SignInResponse(BaseModel):
    user: User
    token: str
    session: Session
    totp_enabled: bool


class UserResponse(BaseModel):
    user: User


class UserSummaryResponse(BaseModel):
    user: UserSummary


class SessionsResponse(BaseModel):
    sessions: list[Session]


class StepUpResponse(BaseModel):
    step_up_expires_at: str


class TwoFactorSetupResponse(BaseModel):
    secret: str
    otpauth_url: str
    qr_png: str = Field(description="data:image/png;base64,... URI")


class TwoFactorEnableResponse(BaseModel):
    user: User
    backup_codes: list[str]


class BackupCodesResponse(BaseModel):
    backup_codes: list[str]


class SecurityEventsResponse(BaseModel):
    security_events: list[SecurityEvent]
    has_more: bool
