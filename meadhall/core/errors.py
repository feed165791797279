"""The one error type of the service and the registry of its codes (docs/reference/errors.md).

A service raises `AppError("channel.not_found")`; the HTTP layer renders
`{"error": {"code", "message", ...extra}}` with the registered status.
"""

from __future__ import annotations

import math
from typing import Any

# code -> (status, default English message)
REGISTRY: dict[str, tuple[int, str]] = {
    "validation.failed": (422, "The request is not valid"),
    "request.too_large": (413, "The request body is larger than 1 MiB"),
    "request.method_not_allowed": (405, "This method is not allowed on this path"),
    "route.not_found": (404, "No such route"),
    "internal.error": (500, "An unexpected error occurred"),
    "service.unavailable": (503, "The service is temporarily unavailable"),
    "rate_limited": (429, "You are being rate limited"),
    "auth.unauthorized": (401, "Authentication required"),
    "auth.invalid_credentials": (401, "Invalid login or password"),
    "auth.2fa_required": (401, "A two-factor code is required"),
    "auth.invalid_code": (401, "Invalid or already used code"),
    "auth.passkey_failed": (401, "Passkey verification failed"),
    "auth.passkey_uv_required": (401, "Administrators must verify with a PIN or biometric on their passkey"),
    "auth.ceremony_invalid": (401, "Unknown, expired or already used ceremony"),
    "auth.step_up_required": (403, "Re-verify your identity to continue"),
    "auth.2fa_enrollment_required": (403, "Instance administrators must enable two-factor authentication"),
    "auth.registration_disabled": (403, "Registration is disabled on this instance"),
    "auth.passkey_unsupported": (403, "Passkeys are not available when the domain is an IP address"),
    "auth.origin_mismatch": (403, "Request origin does not match this service"),
    "auth.2fa_already_enabled": (409, "Two-factor authentication is already enabled"),
    "auth.2fa_not_enabled": (409, "Two-factor authentication is not enabled"),
    "auth.2fa_setup_required": (409, "Start two-factor setup first"),
    "user.banned": (403, "This account is banned"),
    "user.not_found": (404, "Unknown user"),
    "user.username_taken": (409, "This username is taken"),
    "user.email_taken": (409, "This email is already registered"),
    "user.already_banned": (409, "The user is already banned"),
    "user.not_banned": (409, "The user is not banned"),
    "user.imported": (403, "This account holds history imported from elsewhere and cannot sign in or be contacted"),
    "user.owns_guilds": (409, "The user owns servers; transfer or delete them first"),
    "instance.last_admin": (409, "The last instance administrator cannot be removed"),
    "session.not_found": (404, "Unknown session"),
    "passkey.not_found": (404, "Unknown passkey"),
    "passkey.already_registered": (409, "This passkey is already registered"),
    "passkey.limit_reached": (409, "At most 10 passkeys per account"),
    "perm.denied": (403, "You do not have permission to do this"),
    "guild.not_found": (404, "Unknown server"),
    "guild.banned": (403, "You are banned from this server"),
    "guild.owner_cannot_leave": (409, "The owner cannot leave the server"),
    "guild.limit_reached": (409, "At most 200 server memberships"),
    "channel.not_found": (404, "Unknown room"),
    "channel.wrong_type": (422, "This operation is not valid for this room type"),
    "channel.limit_reached": (409, "At most 500 rooms per server"),
    "override.not_found": (404, "Unknown permission override"),
    "message.not_found": (404, "Unknown message"),
    "message.edit_window_expired": (403, "Messages can only be edited for 24 hours"),
    "pin.not_found": (404, "The message is not pinned"),
    "pin.limit_reached": (409, "At most 50 pins per room"),
    "reaction.invalid_emoji": (422, "Unknown or malformed emoji"),
    "reaction.limit_reached": (409, "At most 20 distinct reactions per message"),
    "role.not_found": (404, "Unknown role"),
    "role.default_role": (422, "The default role cannot be changed this way"),
    "role.limit_reached": (409, "At most 250 roles per server"),
    "member.not_found": (404, "Unknown member"),
    "ban.not_found": (404, "Unknown ban"),
    "invite.not_found": (404, "Unknown invitation"),
    "invite.public": (409, "The public invitation cannot be deleted directly"),
    "invite.limit_reached": (409, "At most 1000 invitations per server"),
    "emoji.not_found": (404, "Unknown emoji"),
    "emoji.name_taken": (409, "An emoji with this name exists"),
    "emoji.limit_reached": (409, "At most 100 emojis per server"),
    "sound.not_found": (404, "Unknown sound"),
    "sound.name_taken": (409, "A sound with this name exists"),
    "sound.limit_reached": (409, "Sound limit reached"),
    "sound.palette_event_taken": (409, "An interface sound for this event exists"),
    "cosmetic.not_found": (404, "Unknown cosmetic"),
    "cosmetic.limit_reached": (409, "At most 100 gallery items per server"),
    "webhook.not_found": (404, "Unknown webhook"),
    "webhook.limit_reached": (409, "At most 15 webhooks per room"),
    "template.not_found": (404, "Unknown template"),
    "template.limit_reached": (409, "At most 20 templates"),
    "template.too_large": (422, "Template structure is larger than 16 KiB"),
    "file.not_found": (404, "Unknown file"),
    "file.too_large": (413, "The file is too large"),
    "file.unsupported_type": (415, "This file type is not allowed"),
    "dm.not_group": (422, "This is not a group conversation"),
    "dm.full": (409, "A group conversation has at most 10 participants"),
    "recipient.not_found": (404, "The user is not a participant"),
    "relationship.not_found": (404, "No relationship with this user"),
    "relationship.already_exists": (409, "Already friends or a request is pending"),
    "relationship.blocked": (403, "A block exists between these users"),
    "voice.disabled": (403, "Voice is not configured on this instance"),
    "voice.channel_full": (409, "The voice room is full"),
    "voice.not_connected": (409, "You are not in a voice room of this server"),
    "voice_state.not_found": (404, "The user is not in a voice room"),
    "call.not_found": (404, "No ongoing call"),
    "call.already_exists": (409, "A call is already ongoing"),
    "call.invalid_state": (409, "The call is not in a state that allows this"),
    "link_preview.disabled": (403, "Link previews are disabled"),
    "push.disabled": (403, "Web Push is not configured"),
    "push.limit_reached": (409, "At most 10 push subscriptions"),
    "push_subscription.not_found": (404, "Unknown push subscription"),
}


class AppError(Exception):
    """An expected failure with a stable code; `extra` adds fields to the error envelope."""

    def __init__(self, code: str, message: str | None = None, **extra: Any) -> None:
        if code not in REGISTRY:
            raise KeyError(f"unregistered error code {code!r}")
        self.code = code
        self.status, default = REGISTRY[code]
        self.message = message or default
        self.extra = extra
        self.headers: dict[str, str] = {}
        super().__init__(f"{code}: {self.message}")

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, **self.extra}}


def validation_error(field: str, message: str) -> AppError:
    """422 `validation.failed` for one field, for rules a schema cannot express."""
    return AppError("validation.failed", f"{field}: {message}", details=[{"field": field, "message": message}])


def permission_denied(permission: str | None, reason: str, **extra: Any) -> AppError:
    """403 `perm.denied`; `permission` names the missing flag or is None when a rule failed."""
    return AppError("perm.denied", reason, permission=permission, **extra)


def rate_limited(bucket: str, retry_after: float, headers: dict[str, str] | None = None) -> AppError:
    # Rounded up to the millisecond: a client that waits exactly `retry_after` must be let through.
    err = AppError("rate_limited", "You are being rate limited", retry_after=math.ceil(retry_after * 1000) / 1000,
                   bucket=bucket)
    if headers:
        err.headers = headers
    return err
