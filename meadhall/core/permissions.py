"""Permission flags, their string form and the permission math of API.md 0.12, 1.4 and 1.5.

Pure: plain data in, ints and booleans out. Services load roles, overrides and membership, call these
functions, and turn a refusal into `perm.denied` (naming `missing(...)`) or a ValueError into 422.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal


class Permission(enum.IntFlag):
    CREATE_INVITE = 1 << 0
    KICK_MEMBERS = 1 << 1
    BAN_MEMBERS = 1 << 2
    ADMINISTRATOR = 1 << 3
    MANAGE_CHANNELS = 1 << 4
    MANAGE_GUILD = 1 << 5
    ADD_REACTIONS = 1 << 6
    VIEW_AUDIT_LOG = 1 << 7
    PRIORITY_SPEAKER = 1 << 8
    STREAM = 1 << 9
    VIEW_CHANNEL = 1 << 10
    SEND_MESSAGES = 1 << 11
    SEND_SCREAMS = 1 << 12
    MANAGE_MESSAGES = 1 << 13
    EMBED_LINKS = 1 << 14
    ATTACH_FILES = 1 << 15
    READ_MESSAGE_HISTORY = 1 << 16
    MENTION_EVERYONE = 1 << 17
    USE_EXTERNAL_EMOJIS = 1 << 18
    BYPASS_SLOWMODE = 1 << 19
    CONNECT_VOICE = 1 << 20
    SPEAK = 1 << 21
    MUTE_MEMBERS = 1 << 22
    DEAFEN_MEMBERS = 1 << 23
    MOVE_MEMBERS = 1 << 24
    USE_VAD = 1 << 25
    CHANGE_NICKNAME = 1 << 26
    MANAGE_NICKNAMES = 1 << 27
    MANAGE_ROLES = 1 << 28
    MANAGE_WEBHOOKS = 1 << 29
    MANAGE_EMOJIS = 1 << 30
    MANAGE_SOUNDS = 1 << 31
    USE_SOUNDBOARD = 1 << 32
    SEND_PRIVATE_MESSAGES = 1 << 33
    MANAGE_CHANNEL_BACKGROUND = 1 << 34
    MODERATE_MEMBERS = 1 << 35
    VIDEO = 1 << 36


P = Permission
# Kept outside the enum so that "ALL"/"DEFAULT" are never accepted or produced as permission names.
ALL = Permission((1 << 37) - 1)
NONE = Permission(0)
DEFAULT = (
    P.CREATE_INVITE | P.ADD_REACTIONS | P.STREAM | P.VIEW_CHANNEL | P.SEND_MESSAGES | P.SEND_SCREAMS
    | P.EMBED_LINKS | P.ATTACH_FILES | P.READ_MESSAGE_HISTORY | P.USE_EXTERNAL_EMOJIS | P.CONNECT_VOICE
    | P.SPEAK | P.USE_VAD | P.CHANGE_NICKNAME | P.USE_SOUNDBOARD | P.SEND_PRIVATE_MESSAGES | P.VIDEO
)
# What a member under timeout keeps (1.4 step 8).
TIMEOUT_MASK = P.VIEW_CHANNEL | P.READ_MESSAGE_HISTORY
# Bits an override can move; plain int so `~` means every other bit, not the enum's complement.
_OVERRIDABLE = int(ALL) & ~int(P.ADMINISTRATOR)

# Ascending bit order: the output order of 0.12.
FLAGS: tuple[Permission, ...] = tuple(sorted(Permission, key=int))
_BY_NAME: dict[str, Permission] = {flag.name: flag for flag in FLAGS if flag.name}


# ---------------------------------------------------------------- strings (0.12)


def _checked(mask: int) -> int:
    if not 0 <= mask <= ALL:
        raise ValueError(f"not a permission mask: {mask}")
    return mask


def names(mask: int) -> list[str]:
    """Names of the flags in `mask`, ascending bit order."""
    mask = _checked(mask)
    return [flag.name for flag in FLAGS if mask & flag and flag.name]


def to_string(mask: int) -> str:
    return "|".join(names(mask))


def parse(text: str) -> Permission:
    """`"VIEW_CHANNEL | SEND_MESSAGES"` -> mask. Raises ValueError naming the bad token.

    "" (or only whitespace) is the empty set; an empty token between bars ("A||B") is an unknown name.
    """
    if not text.strip():
        return NONE
    mask = NONE
    for token in text.split("|"):
        name = token.strip()
        flag = _BY_NAME.get(name)
        if flag is None:
            raise ValueError(f"unknown permission: {name!r}")
        mask |= flag
    return mask


def has(mask: int, perm: int) -> bool:
    """Every flag of `perm` is in `mask` (so `has(m, A | B)` needs both)."""
    return mask & perm == perm


def missing(mask: int, required: int) -> Permission | None:
    """The lowest-bit flag of `required` that `mask` lacks, for `error.permission`; None when all held."""
    lacking = int(required) & ~int(mask)
    return next((flag for flag in FLAGS if lacking & flag), None)


# ---------------------------------------------------------------- inputs


@dataclass(frozen=True, slots=True)
class Override:
    """A room's permission override (2.11) for a role or a member."""

    target_id: int
    kind: Literal["role", "member"]
    allow: int
    deny: int


@dataclass(frozen=True, slots=True)
class MemberContext:
    """Who is asking, in one guild. `timed_out` is decided by the caller's clock (timeout_until > now)."""

    user_id: int
    is_instance_admin: bool = False
    is_member: bool = True
    is_owner: bool = False
    role_ids: frozenset[int] = frozenset()  # held roles; the default role is implied and may be absent
    timed_out: bool = False


@dataclass(frozen=True, slots=True)
class GuildRoles:
    """The guild's roles: id -> permission mask and id -> position (both include the default role)."""

    default_role_id: int
    permissions: Mapping[int, int]
    positions: Mapping[int, int]

    def held(self, member: MemberContext) -> frozenset[int]:
        """Held roles other than the default role that still exist (a stale id grants nothing)."""
        return frozenset(r for r in member.role_ids if r != self.default_role_id and r in self.permissions)


# ---------------------------------------------------------------- computation (1.4)


def base_permissions(member: MemberContext, roles: GuildRoles) -> Permission:
    """Step 4: the default role OR-ed with every held role (0 for non-members)."""
    if not member.is_member:
        return NONE
    mask = int(roles.permissions.get(roles.default_role_id, 0))
    for role_id in roles.held(member):
        mask |= int(roles.permissions[role_id])
    return Permission(mask & ALL)


def _bypass(member: MemberContext) -> Permission | None:
    """Steps 1-3: the answers that need no roles at all."""
    if member.is_instance_admin:
        return ALL
    if not member.is_member:
        return NONE
    if member.is_owner:
        return ALL
    return None


def _finish(base: int, mask: int, member: MemberContext) -> Permission:
    # Step 7 looks at the base, not at `mask`: overrides can neither deny nor grant ADMINISTRATOR.
    if base & P.ADMINISTRATOR:
        mask = ALL
    # Step 8 comes after 7 on purpose: the hierarchy refuses timeouts on ADMINISTRATOR holders, but one
    # set before the role was granted must still silence them. Instance admins and owners returned earlier.
    if member.timed_out:
        mask &= TIMEOUT_MASK
    return Permission(mask)


def guild_permissions(member: MemberContext, roles: GuildRoles) -> Permission:
    """Guild-level checks (1.4 step 9): steps 1-4, 7, 8, no room overrides."""
    early = _bypass(member)
    if early is not None:
        return early
    base = base_permissions(member, roles)
    return _finish(base, base, member)


def _apply(mask: int, overrides: Iterable[Override]) -> int:
    """Remove the union of deny, then add the union of allow.

    Within one override a flag in both allow and deny is denied (2.11), so an override's allow counts
    only where its own deny does not. ADMINISTRATOR is stripped: overrides may not carry it (validated on
    write), and stored data must not hand out a lone ADMINISTRATOR bit that grants nothing.
    """
    deny = allow = 0
    for o in overrides:
        deny |= int(o.deny)
        allow |= int(o.allow) & ~int(o.deny)
    return (int(mask) & ~(deny & _OVERRIDABLE)) | (allow & _OVERRIDABLE)


def channel_permissions(
    member: MemberContext, roles: GuildRoles, overrides: Sequence[Override]
) -> Permission:
    """Permissions in one room (1.4 steps 1-9). `overrides` are the room's own; others are ignored."""
    early = _bypass(member)
    if early is not None:
        return early
    base = base_permissions(member, roles)
    held = roles.held(member)
    role_ovs = [o for o in overrides if o.kind == "role"]
    mask = _apply(base, (o for o in role_ovs if o.target_id == roles.default_role_id))
    mask = _apply(mask, (o for o in role_ovs if o.target_id in held))
    mask = _apply(mask, (o for o in overrides if o.kind == "member" and o.target_id == member.user_id))
    mask = _finish(base, mask, member)
    # Step 9: a room one cannot view grants nothing else.
    return mask if mask & P.VIEW_CHANNEL else NONE


# ---------------------------------------------------------------- hierarchy (1.5)

# Role positions are small integers (default 0, others >= 1); these sit above any of them.
OWNER_RANK = 1 << 62
# Instance administrators bypass the hierarchy: as actors they outrank even the owner. As targets they
# have their ordinary rank (the bypass is about what they may do, not protection from others).
BYPASS_RANK = OWNER_RANK + 1


def rank(member: MemberContext, roles: GuildRoles) -> int:
    """A member's rank as a target: owner above all, else the highest held position (default role 0)."""
    if member.is_owner:
        return OWNER_RANK
    return max((roles.positions.get(r, 0) for r in roles.held(member)), default=0)


def actor_rank(member: MemberContext, roles: GuildRoles) -> int:
    """The rank a caller acts with: `rank`, raised to BYPASS_RANK for instance administrators."""
    return BYPASS_RANK if member.is_instance_admin else rank(member, roles)


def can_manage_role(actor_rank: int, role_position: int) -> bool:
    """Assign, remove or update a role: strictly below the caller (an equal position is refused).

    The default role is refused by the caller with 422 `role.default_role`, before this check.
    """
    return role_position < actor_rank


def can_act_on(actor: MemberContext, target: MemberContext, roles: GuildRoles) -> bool:
    """Kick, ban, timeout, others' nicknames, voice moderation.

    Never on self and never on the owner, for everyone including instance administrators: the owner
    cannot be removed from their guild, and self-service has its own endpoints (leave, own nickname).
    """
    if actor.user_id == target.user_id or target.is_owner:
        return False
    return rank(target, roles) < actor_rank(actor, roles)


def can_timeout(actor: MemberContext, target: MemberContext, roles: GuildRoles) -> bool:
    """`can_act_on`, and never on a holder of ADMINISTRATOR (in a role they hold, 1.4 step 4)."""
    if base_permissions(target, roles) & P.ADMINISTRATOR:
        return False
    return can_act_on(actor, target, roles)


def can_grant(actor_guild_perms: int, requested: int) -> bool:
    """A created/updated role may only carry permissions the caller holds; ADMINISTRATOR holds all."""
    if actor_guild_perms & P.ADMINISTRATOR:
        return True
    return int(requested) & ~int(actor_guild_perms) == 0


def can_reorder(actor_rank: int, moves: Mapping[int, int], positions: Mapping[int, int]) -> bool:
    """Every moved role is below the caller now and lands below the caller. Unknown role ids: refused."""
    for role_id, new_position in moves.items():
        current = positions.get(role_id)
        if current is None or current >= actor_rank or new_position >= actor_rank:
            return False
    return True


def validate_override(allow: int, deny: int) -> None:
    """Content rule for writing an override: no ADMINISTRATOR, no unknown bits. ValueError -> 422."""
    for mask in (allow, deny):
        _checked(mask)
        if mask & P.ADMINISTRATOR:
            raise ValueError("an override may not contain ADMINISTRATOR")


def override_allowed(actor_channel_perms: int, allow: int, deny: int) -> bool:
    """An override may only allow or deny permissions the caller holds in that room."""
    return int(allow | deny) & ~int(actor_channel_perms) == 0
