"""VAPID keys (docs/push.md): the private key of VAPID_PRIVATE_KEY, PKCS#8 as PEM or base64url DER, and the
public key derived from it, which browsers take as `applicationServerKey` (OpenAPI: getPushConfig).

`cryptography` is imported by each function's first call: an idle node without push in use never loads
its native module (issue 35, some 7 MiB)."""

from __future__ import annotations

import base64
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric import ec


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    """Strict base64url, padding optional; ValueError otherwise."""
    text = text.strip()
    if not text or any(c not in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=" for c in text):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text.rstrip("=") + "=" * (-len(text.rstrip("=")) % 4))


@lru_cache(maxsize=4)
def load_private_key(value: str) -> ec.EllipticCurvePrivateKey:
    """The P-256 key of VAPID_PRIVATE_KEY; ValueError naming what is wrong."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    value = value.strip()
    if value.startswith("-----BEGIN"):
        key = serialization.load_pem_private_key(value.encode(), password=None)
    else:
        key = serialization.load_der_private_key(b64url_decode(value), password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey) or not isinstance(key.curve, ec.SECP256R1):
        raise ValueError("must be a P-256 (prime256v1) key")
    return key


def public_key_b64(private: ec.EllipticCurvePrivateKey) -> str:
    """The uncompressed point (65 bytes, 0x04 first), base64url without padding."""
    from cryptography.hazmat.primitives import serialization

    return b64url(private.public_key().public_bytes(serialization.Encoding.X962,
                                                    serialization.PublicFormat.UncompressedPoint))


def generate_keys() -> dict[str, str]:
    """A new key pair for `meadhall vapid-keys`: nothing is written anywhere."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    private = ec.generate_private_key(ec.SECP256R1())
    der = private.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    encoded = b64url(der)
    return {"private_key": encoded, "public_key": public_key_b64(private), "env": f"VAPID_PRIVATE_KEY={encoded}"}


def is_p256_point(raw: bytes) -> bool:
    """Whether `raw` is an uncompressed point on P-256 (what a browser's `p256dh` key is)."""
    from cryptography.hazmat.primitives.asymmetric import ec

    if len(raw) != 65 or raw[0] != 4:
        return False
    try:
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), raw)
    except ValueError:
        return False
    return True
