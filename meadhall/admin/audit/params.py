"""Query parameters of the instance audit log and its CSV export (OpenAPI: listInstanceAuditLog,
exportInstanceAuditLog): the filters, parsed into the audit store's AuditFilters."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Annotated

from fastapi import Query
from pydantic import AfterValidator

from meadhall.api.openapi import ID_SCHEMA, rules
from meadhall.api.pagination import query_id
from meadhall.audit.queries import AuditFilters
from meadhall.core.errors import validation_error
from meadhall.core.text import check_single_line

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIME_RULE = "a date `YYYY-MM-DD` (midnight UTC) or an ISO 8601 timestamp with an offset"
TIME_RULES = rules({"from": _TIME_RULE, "to": _TIME_RULE})

ActionQuery = Annotated[str | None, Query(max_length=64, description="Only this action (Appendix A)"),
                        AfterValidator(check_single_line)]
ActorQuery = Annotated[str | None, Query(description="Only entries by this user", json_schema_extra=ID_SCHEMA)]
TargetQuery = Annotated[str | None, Query(description="Only entries about this target", json_schema_extra=ID_SCHEMA)]
GuildQuery = Annotated[str | None, Query(description="Only entries of this server", json_schema_extra=ID_SCHEMA)]
FromQuery = Annotated[str | None, Query(alias="from", max_length=64,
                                        description="Entries created at or after: " + _TIME_RULE)]
ToQuery = Annotated[str | None, Query(alias="to", max_length=64,
                                      description="Entries created before: " + _TIME_RULE)]


def query_time(name: str, raw: str | None) -> datetime | None:
    """A date or a timestamp with an offset, in UTC and raised to the next whole millisecond: entries are
    shown (and compared) at millisecond precision, so `from` and `to` act on the shown value."""
    if raw is None:
        return None
    try:
        if _DATE.match(raw):
            return datetime.strptime(raw, "%Y-%m-%d").replace(tzinfo=UTC)
        value = datetime.fromisoformat(raw)
    except ValueError:
        raise validation_error(name, "must be a date YYYY-MM-DD or an ISO 8601 timestamp") from None
    if value.tzinfo is None:
        raise validation_error(name, "a timestamp needs an offset, e.g. Z")
    value = value.astimezone(UTC)
    sub_ms = value.microsecond % 1000
    return value + timedelta(microseconds=1000 - sub_ms) if sub_ms else value


def audit_filters(action: str | None, actor_id: str | None, target_id: str | None, guild_id: str | None,
                  created_from: str | None, created_to: str | None, before_id: str | None = None) -> AuditFilters:
    return AuditFilters(
        guild_id=query_id("guild_id", guild_id), action=action, actor_id=query_id("actor_id", actor_id),
        target_id=query_id("target_id", target_id), before_id=query_id("before_id", before_id),
        created_from=query_time("from", created_from), created_to=query_time("to", created_to),
    )
