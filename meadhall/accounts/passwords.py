"""Password policy: 10-256 characters, not in the local list of 10 000 leaked passwords.

The bundled list (`data/leaked-passwords.txt`) holds the 10 000 most frequent passwords of public breach
corpora, lower-cased, as published in the common-password list of Django (BSD licence).
"""

from __future__ import annotations

import functools
from pathlib import Path

from argon2 import PasswordHasher
from argon2.exceptions import VerificationError

from meadhall.core import limits
from meadhall.core.errors import validation_error

BUNDLED_LIST = Path(__file__).parent / "data" / "leaked-passwords.txt"


@functools.lru_cache(maxsize=4)
def leaked_passwords(path: Path | None = None) -> frozenset[str]:
    source = path or BUNDLED_LIST
    with source.open(encoding="utf-8", errors="replace") as fh:
        return frozenset(line.strip().lower() for line in fh if line.strip())


def check_password(password: str, leaked_file: Path | None = None, field: str = "password") -> None:
    """Raise 422 `validation.failed` with "too short" / "too long" / "too common"."""
    if len(password) < limits.PASSWORD_MIN_LENGTH:
        raise validation_error(field, "too short")
    if len(password) > limits.PASSWORD_MAX_LENGTH:
        raise validation_error(field, "too long")
    if password.lower() in leaked_passwords(leaked_file):
        raise validation_error(field, "too common")


def hash_matches(hasher: PasswordHasher, encoded: str, secret: str) -> bool:
    """Verify an argon2 hash without raising (runs in the hashing pool)."""
    try:
        return bool(hasher.verify(encoded, secret))
    except VerificationError:
        return False
