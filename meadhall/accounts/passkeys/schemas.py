"""Request and response models of the passkey routes (the OpenAPI source; docs/passkeys.md)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, Field, StringConstraints

from meadhall.core.text import check_single_line

PasskeyName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64),
                        AfterValidator(check_single_line)]
CeremonyId = Annotated[str, StringConstraints(min_length=1, max_length=64),
                       Field(description="from the options answer of the same ceremony")]
Credential = Annotated[dict[str, Any], Field(description=(
    "the browser's PublicKeyCredential as JSON (`toJSON()`): RegistrationResponseJSON or "
    "AuthenticationResponseJSON, binary fields base64url"))]


class PasskeyRegisterVerifyRequest(BaseModel):
    ceremony_id: CeremonyId
    credential: Credential
    name: PasskeyName | None = Field(None, description="default `Passkey`")


class PasskeyLoginOptionsRequest(BaseModel):
    email: Annotated[str, StringConstraints(max_length=254)] | None = Field(None, description=(
        "restricts the allowed keys to that account's; an unknown email answers like none"))


class PasskeyLoginVerifyRequest(BaseModel):
    ceremony_id: CeremonyId
    credential: Credential


class PasskeyRenameRequest(BaseModel):
    name: PasskeyName


class Passkey(BaseModel):
    id: str
    name: str
    created_at: str
    last_used_at: str | None
    backed_up: bool


class PasskeyResponse(BaseModel):
    passkey: Passkey


class PasskeysResponse(BaseModel):
    passkeys: list[Passkey]


class CeremonyResponse(BaseModel):
    ceremony_id: str
    options: dict[str, Any] = Field(description=(
        "PublicKeyCredentialCreationOptionsJSON (registration) or PublicKeyCredentialRequestOptionsJSON "
        "(sign-in, step-up): binary fields base64url, for `PublicKeyCredential.parse*OptionsFromJSON`"))
