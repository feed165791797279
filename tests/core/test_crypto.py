"""meadhall.core.crypto computes HKDF with the standard library and loads `cryptography` only to encrypt or
decrypt (issue 35): the derived keys must stay exactly those of `cryptography`'s HKDF, or every stored email,
TOTP secret and audit chain would stop opening."""

from __future__ import annotations

import subprocess
import sys

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from meadhall.core.crypto import DecryptionFailed, Keys, decrypt, encrypt, hkdf_sha256


def _reference(master: bytes, salt: bytes | None, info: bytes, length: int) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=salt, info=info).derive(master)


@pytest.mark.parametrize("length", [1, 16, 31, 32, 33, 64, 100, 255 * 32])
@pytest.mark.parametrize("salt", [b"meadhall-v1", b"", b"\x00" * 32, bytes(range(80))])
@pytest.mark.parametrize("info", [b"", b"email-encryption", b"audit-chain", "ünïcode".encode(), b"x" * 300])
def test_hkdf_equals_cryptographys(length: int, salt: bytes, info: bytes) -> None:
    master = b"0123456789abcdef0123456789abcdef-master"
    assert hkdf_sha256(master, salt=salt, info=info, length=length) == _reference(master, salt, info, length)


def test_hkdf_with_no_salt_is_cryptographys_none_salt() -> None:
    assert hkdf_sha256(b"k" * 40, salt=b"", info=b"i", length=42) == _reference(b"k" * 40, None, b"i", 42)


@pytest.mark.parametrize("length", [0, 255 * 32 + 1])
def test_hkdf_refuses_lengths_rfc_5869_does_not_give(length: int) -> None:
    with pytest.raises(ValueError):
        hkdf_sha256(b"k", salt=b"s", info=b"i", length=length)


def test_the_derived_keys_are_those_cryptographys_hkdf_gave() -> None:
    master = b"a-secret-key-of-forty-characters-or-more"
    keys = Keys.derive(master)
    for field, info in [("email_enc", "email-encryption"), ("email_index", "email-blind-index"),
                        ("totp_enc", "totp-secret-encryption"), ("audit_chain", "audit-chain")]:
        assert getattr(keys, field) == _reference(master, b"meadhall-v1", info.encode(), 32)


def test_a_value_encrypted_before_the_change_still_opens() -> None:
    """A blob laid out as before (nonce, then AES-256-GCM ciphertext and tag) under the HKDF key."""
    key = _reference(b"a-secret-key-of-forty-characters-or-more", b"meadhall-v1", b"email-encryption", 32)
    nonce = bytes(12)
    blob = nonce + AESGCM(key).encrypt(nonce, b"ada@example.org", b"42")
    assert decrypt(Keys.derive(b"a-secret-key-of-forty-characters-or-more").email_enc, blob, aad=b"42") \
        == "ada@example.org"


def test_encrypt_and_decrypt_round_trip_and_a_changed_byte_fails() -> None:
    key = Keys.derive(b"k" * 40).totp_enc
    blob = encrypt(key, "JBSWY3DPEHPK3PXP", aad=b"7")
    assert decrypt(key, blob, aad=b"7") == "JBSWY3DPEHPK3PXP"
    with pytest.raises(DecryptionFailed):
        decrypt(key, blob, aad=b"8")
    with pytest.raises(DecryptionFailed):
        decrypt(key, blob[:-1] + bytes([blob[-1] ^ 1]), aad=b"7")


def test_deriving_keys_loads_no_cryptography() -> None:
    code = ("import sys; from meadhall.core.crypto import Keys; Keys.derive(b'k' * 40); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'cryptography'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"
