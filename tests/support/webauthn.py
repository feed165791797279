"""A software WebAuthn authenticator for tests: ES256 keys made with `cryptography`, `none` attestation,
resident (discoverable) credentials that remember their user handle, a signature counter per key.

It builds clientDataJSON, authenticatorData and the attestation object by hand (CBOR with cbor2), as a
browser and a security key would, so the service's checks run on real bytes. Knobs make it misbehave:
another origin or RP ID, no user presence, no user verification, a broken signature, a counter that does
not move."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import struct
from dataclasses import dataclass, field
from typing import Any

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

UP, UV, BE, BS, AT = 0x01, 0x04, 0x08, 0x10, 0x40


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Credential:
    id: bytes
    key: ec.EllipticCurvePrivateKey
    rp_id: str
    user_handle: bytes
    sign_count: int = 0

    @property
    def id_b64(self) -> str:
        return b64url(self.id)

    def cose_public_key(self) -> bytes:
        numbers = self.key.public_key().public_numbers()
        return cbor2.dumps({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")})


@dataclass
class Authenticator:
    """Holds the credentials it created; `counter=False` makes an authenticator whose counter stays 0;
    `verifies=False` one that never verifies its user (a security key without a PIN: no UV flag)."""

    origin: str = "http://localhost:8000"
    counter: bool = True
    backed_up: bool = False
    verifies: bool = True
    credentials: list[Credential] = field(default_factory=list)

    def _client_data(self, kind: str, challenge: str, origin: str | None) -> bytes:
        return json.dumps({"type": kind, "challenge": challenge, "origin": origin or self.origin,
                           "crossOrigin": False}).encode()

    def _flags(self, present: bool, extra: int = 0, verified: bool | None = None) -> int:
        verified = self.verifies if verified is None else verified
        flags = (UP if present else 0) | (UV if verified else 0) | extra
        if self.backed_up:
            flags |= BE | BS
        return flags

    def create(self, options: dict[str, Any], *, origin: str | None = None, rp_id: str | None = None,
               present: bool = True, credential_id: bytes | None = None) -> dict[str, Any]:
        """RegistrationResponseJSON for `options` (PublicKeyCredentialCreationOptionsJSON); a new key,
        under `credential_id` when given."""
        rp = rp_id or options["rp"]["id"]
        cred = Credential(credential_id or os.urandom(16), ec.generate_private_key(ec.SECP256R1()), rp,
                          unb64url(options["user"]["id"]))
        client_data = self._client_data("webauthn.create", options["challenge"], origin)
        attested = bytes(16) + struct.pack(">H", len(cred.id)) + cred.id + cred.cose_public_key()
        auth_data = (hashlib.sha256(rp.encode()).digest() + bytes([self._flags(present, AT)])
                     + struct.pack(">I", cred.sign_count) + attested)
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
        self.credentials.append(cred)
        return {
            "id": cred.id_b64, "rawId": cred.id_b64, "type": "public-key",
            "response": {"clientDataJSON": b64url(client_data), "attestationObject": b64url(attestation),
                         "transports": ["internal"]},
            "clientExtensionResults": {}, "authenticatorAttachment": "platform",
        }

    def pick(self, options: dict[str, Any]) -> Credential:
        """The credential a browser would offer: one of `allowCredentials`, else a resident key of the RP."""
        allowed = {c["id"] for c in options.get("allowCredentials") or []}
        for cred in reversed(self.credentials):
            if (cred.id_b64 in allowed) if allowed else cred.rp_id == options["rpId"]:
                return cred
        raise LookupError("no credential for these options")

    def get(self, options: dict[str, Any], *, credential: Credential | None = None, origin: str | None = None,
            rp_id: str | None = None, present: bool = True, bad_signature: bool = False,
            sign_count: int | None = None, user_handle: bytes | None = None,
            verified: bool | None = None) -> dict[str, Any]:
        """AuthenticationResponseJSON for `options` (PublicKeyCredentialRequestOptionsJSON); `verified`
        sets or clears the UV flag of this one answer (default: the authenticator's `verifies`)."""
        cred = credential or self.pick(options)
        if sign_count is not None:
            cred.sign_count = sign_count
        elif self.counter:
            cred.sign_count += 1
        client_data = self._client_data("webauthn.get", options["challenge"], origin)
        auth_data = (hashlib.sha256((rp_id or cred.rp_id).encode()).digest() + bytes([self._flags(present, verified=verified)])
                     + struct.pack(">I", cred.sign_count))
        signature = cred.key.sign(auth_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256()))
        if bad_signature:
            signature = cred.key.sign(b"something else", ec.ECDSA(hashes.SHA256()))
        return {
            "id": cred.id_b64, "rawId": cred.id_b64, "type": "public-key",
            "response": {"clientDataJSON": b64url(client_data), "authenticatorData": b64url(auth_data),
                         "signature": b64url(signature), "userHandle": b64url(user_handle or cred.user_handle)},
            "clientExtensionResults": {}, "authenticatorAttachment": "platform",
        }
