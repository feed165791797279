"""Keys derived from SECRET_KEY, field encryption, blind indexes, tokens and one-time codes.

Subkeys come from HKDF-SHA256 with a distinct `info` each, so one master key never serves two purposes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import string
from dataclasses import dataclass

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

_NONCE = 12


def _derive(master: bytes, info: str) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=b"meadhall-v1", info=info.encode()).derive(master)


@dataclass(frozen=True)
class Keys:
    email_enc: bytes
    email_index: bytes
    totp_enc: bytes
    audit_chain: bytes  # the HMAC key of the audit hash chain (docs/audit.md)

    @classmethod
    def derive(cls, master: bytes) -> Keys:
        return cls(
            email_enc=_derive(master, "email-encryption"),
            email_index=_derive(master, "email-blind-index"),
            totp_enc=_derive(master, "totp-secret-encryption"),
            audit_chain=_derive(master, "audit-chain"),
        )


def encrypt(key: bytes, plaintext: str, aad: bytes = b"") -> bytes:
    """AES-256-GCM; the random nonce is stored in front of the ciphertext."""
    nonce = secrets.token_bytes(_NONCE)
    return nonce + AESGCM(key).encrypt(nonce, plaintext.encode(), aad)


def decrypt(key: bytes, blob: bytes, aad: bytes = b"") -> str:
    return AESGCM(key).decrypt(blob[:_NONCE], blob[_NONCE:], aad).decode()


def blind_index(key: bytes, normalised: str) -> str:
    """HMAC-SHA-256 of the normalised value: equality lookups without storing the value."""
    return hmac.new(key, normalised.encode(), hashlib.sha256).hexdigest()


def new_token() -> str:
    """32 random bytes, base64url without padding (43 characters)."""
    return base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def random_password(length: int = 20) -> str:
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(length))


_CODE_ALPHABET = string.ascii_lowercase + string.digits


def new_backup_code() -> str:
    """`xxxx-xxxx-xxxx` over [a-z0-9] (14 characters)."""
    raw = "".join(secrets.choice(_CODE_ALPHABET) for _ in range(12))
    return f"{raw[:4]}-{raw[4:8]}-{raw[8:]}"


def normalise_backup_code(value: str) -> str:
    """Case-insensitive, spaces ignored; the dashes are optional on input."""
    return "".join(ch for ch in value.lower() if ch not in " -\t")
