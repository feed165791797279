"""The WebAuthn relying party over py_webauthn: the options a browser gets and the checks of its answer.

RP ID = DOMAIN, origin = the origin of PUBLIC_URL. User presence is required, user verification is
`preferred` and not required here (the sign-in and step-up services require it of administrators, from the
flag this module reports); a signature counter that does not increase (one of the two non-zero) refuses
(py_webauthn's rule). Every failure is 401 `auth.passkey_failed`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from meadhall.accounts.passkeys.ceremonies import TIMEOUT_MS
from meadhall.core.errors import AppError
from meadhall.runtime import Runtime

if TYPE_CHECKING:
    from webauthn.helpers.structs import PublicKeyCredentialDescriptor
    from webauthn.registration.verify_registration_response import VerifiedRegistration

# py_webauthn (with cbor2, pyOpenSSL and pyasn1: some 5 MiB and 0.2 s) is imported by the first ceremony,
# inside each function here, not when the routes are declared.


def _algorithms() -> list[Any]:
    from webauthn.helpers.cose import COSEAlgorithmIdentifier

    return [COSEAlgorithmIdentifier.ECDSA_SHA_256, COSEAlgorithmIdentifier.RSASSA_PKCS1_v1_5_SHA_256]


def _refusals() -> tuple[type[Exception], ...]:
    """What malformed input makes py_webauthn (and the CBOR and base64 decoding under it) raise."""
    from webauthn.helpers.exceptions import WebAuthnException

    return (WebAuthnException, ValueError, TypeError, KeyError, IndexError, AttributeError)


def check_enabled(rt: Runtime) -> None:
    if not rt.settings.passkeys_enabled:
        raise AppError("auth.passkey_unsupported")


def b64(data: bytes) -> str:
    from webauthn.helpers import bytes_to_base64url

    return bytes_to_base64url(data)


def unb64(text: str) -> bytes:
    from webauthn import base64url_to_bytes

    return base64url_to_bytes(text)


def descriptors(rows: list[Any]) -> list[PublicKeyCredentialDescriptor]:
    from webauthn.helpers.structs import AuthenticatorTransport, PublicKeyCredentialDescriptor

    transports = {t.value: t for t in AuthenticatorTransport}
    return [
        PublicKeyCredentialDescriptor(
            id=unb64(r["credential_id"]),
            transports=[transports[t] for t in r["transports"] if t in transports] or None,
        )
        for r in rows
    ]


def registration_options(rt: Runtime, challenge: bytes, handle: bytes, username: str, display_name: str,
                         exclude: list[Any]) -> dict[str, Any]:
    from webauthn import generate_registration_options, options_to_json
    from webauthn.helpers.structs import (
        AttestationConveyancePreference,
        AuthenticatorSelectionCriteria,
        ResidentKeyRequirement,
        UserVerificationRequirement,
    )

    options = generate_registration_options(
        rp_id=rt.settings.DOMAIN,
        rp_name=rt.settings.DOMAIN,
        user_id=handle,
        user_name=username,
        user_display_name=display_name,
        challenge=challenge,
        timeout=TIMEOUT_MS,
        attestation=AttestationConveyancePreference.NONE,
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.PREFERRED,
            user_verification=UserVerificationRequirement.PREFERRED,
        ),
        exclude_credentials=descriptors(exclude),
        supported_pub_key_algs=_algorithms(),
    )
    return dict(json.loads(options_to_json(options)))


def authentication_options(rt: Runtime, challenge: bytes) -> dict[str, Any]:
    """Always with an empty `allowCredentials` (discoverable keys): naming the keys of an email would tell
    anyone whether that address has an account with passkeys, and its credential ids (docs/passkeys.md)."""
    from webauthn import generate_authentication_options, options_to_json
    from webauthn.helpers.structs import UserVerificationRequirement

    options = generate_authentication_options(
        rp_id=rt.settings.DOMAIN,
        challenge=challenge,
        timeout=TIMEOUT_MS,
        allow_credentials=[],
        user_verification=UserVerificationRequirement.PREFERRED,
    )
    return dict(json.loads(options_to_json(options)))


def verify_registration(rt: Runtime, credential: dict[str, Any], challenge: str) -> VerifiedRegistration:
    from webauthn import verify_registration_response

    try:
        return verify_registration_response(
            credential=credential,
            expected_challenge=unb64(challenge),
            expected_rp_id=rt.settings.DOMAIN,
            expected_origin=rt.settings.public_origin,
            require_user_presence=True,
            require_user_verification=False,
            supported_pub_key_algs=_algorithms(),
        )
    except _refusals():
        raise AppError("auth.passkey_failed") from None


def presented(credential: dict[str, Any]) -> tuple[str, str | None]:
    """The credential id (base64url, normalised) and the user handle an authentication answer names."""
    from webauthn.helpers import parse_authentication_credential_json

    try:
        parsed = parse_authentication_credential_json(credential)
        handle = parsed.response.user_handle
        return b64(parsed.raw_id), (b64(handle) if handle else None)
    except _refusals():
        raise AppError("auth.passkey_failed") from None


@dataclass(frozen=True)
class Assertion:
    """What a verified sign-in answer tells: the key's new counter, its backup state, and whether the
    authenticator verified its user (PIN or biometric: the UV flag)."""

    sign_count: int
    backed_up: bool
    user_verified: bool


def verify_authentication(rt: Runtime, credential: dict[str, Any], challenge: str, public_key: bytes,
                          sign_count: int) -> Assertion:
    """The checked assertion, or 401 `auth.passkey_failed`."""
    from webauthn import verify_authentication_response

    try:
        verified = verify_authentication_response(
            credential=credential,
            expected_challenge=unb64(challenge),
            expected_rp_id=rt.settings.DOMAIN,
            expected_origin=rt.settings.public_origin,
            credential_public_key=public_key,
            credential_current_sign_count=sign_count,
            require_user_verification=False,
        )
    except _refusals():
        raise AppError("auth.passkey_failed") from None
    return Assertion(verified.new_sign_count, verified.credential_backed_up, verified.user_verified)
