"""Keys derived from SECRET_KEY, field encryption, blind indexes, tokens and one-time codes.

Subkeys come from HKDF-SHA256 with a distinct `info` each, so one master key never serves two purposes.

HKDF is computed here with the standard library (RFC 5869 is two HMAC steps), and `cryptography`'s AES-GCM
is imported by the first encryption or decryption: every node derives its keys at start, and loading
`cryptography`'s native module for that alone held some 7 MiB in an idle node (issue 35). tests/core/
test_crypto_hkdf.py holds the derivation equal to `cryptography`'s HKDF, so the keys, and everything
stored under them, are the same.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import string
from dataclasses import dataclass

_NONCE = 12
_SALT = b"meadhall-v1"


class DecryptionFailed(ValueError):
    """The blob does not open with this key and associated data (a wrong key, a changed byte)."""


def hkdf_sha256(master: bytes, *, salt: bytes, info: bytes, length: int) -> bytes:
    """HKDF with SHA-256 (RFC 5869): extract a pseudorandom key from `master`, expand it to `length` bytes."""
    if not 0 < length <= 255 * hashlib.sha256().digest_size:
        raise ValueError(f"HKDF-SHA256 cannot give {length} bytes")
    prk = hmac.digest(salt or bytes(hashlib.sha256().digest_size), master, "sha256")
    out, block = b"", b""
    counter = 1
    while len(out) < length:
        block = hmac.digest(prk, block + info + bytes([counter]), "sha256")
        out += block
        counter += 1
    return out[:length]


def _derive(master: bytes, info: str) -> bytes:
    return hkdf_sha256(master, salt=_SALT, info=info.encode(), length=32)


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
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    nonce = secrets.token_bytes(_NONCE)
    return nonce + AESGCM(key).encrypt(nonce, plaintext.encode(), aad)


def decrypt(key: bytes, blob: bytes, aad: bytes = b"") -> str:
    """The plaintext of `encrypt`'s blob; DecryptionFailed when it does not open (its callers need not
    import `cryptography` to catch that)."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    try:
        return AESGCM(key).decrypt(blob[:_NONCE], blob[_NONCE:], aad).decode()
    except InvalidTag as exc:
        raise DecryptionFailed("the encrypted value does not open with this key") from exc


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
