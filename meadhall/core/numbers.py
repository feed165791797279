"""JSON numbers for strict integer fields."""

from __future__ import annotations


def integral(value: object) -> object:
    """JSON has one number type: `8146.0` is the integer 8146 (JSON Schema says so too), while a string, a
    boolean or `8146.5` stays refused by a strict integer field (a `BeforeValidator` of one)."""
    if type(value) is float and value.is_integer():
        return int(value)
    return value
