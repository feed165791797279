"""The shared MetaData and column helpers."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Column, DateTime, MetaData

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)


def id_column(name: str = "id", **kwargs: Any) -> Column[int]:
    """A snowflake primary key (assigned by the service, never autoincrement)."""
    return Column(name, BigInteger, primary_key=True, autoincrement=False, **kwargs)


def ts_column(name: str, nullable: bool = False, **kwargs: Any) -> Column[datetime]:
    return Column(name, DateTime(timezone=True), nullable=nullable, **kwargs)
