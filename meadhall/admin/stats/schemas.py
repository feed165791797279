"""Response models of the instance statistics (OpenAPI: getInstanceStats)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from meadhall.guilds.schemas import Guild


class StatsRange(BaseModel):
    from_: str = Field(alias="from")  # a Python keyword
    to: str
    days: int


class GrowthDay(BaseModel):
    date: str
    new: int
    total: int


class UserStats(BaseModel):
    total: int
    banned: int
    deleted: int
    growth: list[GrowthDay]


class MessageStats(BaseModel):
    total: int
    growth: list[GrowthDay]


class ActivityStats(BaseModel):
    online_now: int
    active_1d: int
    active_7d: int
    active_30d: int


class StorageStats(BaseModel):
    database_bytes: int
    files_bytes: int
    files_count: int


class TopGuild(BaseModel):
    guild: Guild
    messages: int
    members: int


class InstanceStats(BaseModel):
    range: StatsRange
    users: UserStats
    messages: MessageStats
    activity: ActivityStats
    storage: StorageStats
    top_guilds: list[TopGuild]


class InstanceStatsResponse(BaseModel):
    stats: InstanceStats
