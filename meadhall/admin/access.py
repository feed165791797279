"""Who may use instance administration: an instance administrator's session. Such a session exercises
administrator power only because granting administration deletes the sessions opened without the
second factor (docs/admin.md); a non-administrator gets 403 `perm.denied` on every route."""

from __future__ import annotations

from meadhall.auth.sessions import Principal
from meadhall.core.errors import AppError


def require_admin(principal: Principal) -> None:
    if not principal.is_instance_admin:
        raise AppError("perm.denied", "Only instance administrators may do this")
