"""The permission math against a slow reference that reads docs/reference/permissions.md literally, one permission at a time."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from meadhall.core.permissions import (
    ALL,
    DEFAULT,
    GuildRoles,
    MemberContext,
    Override,
    actor_rank,
    can_act_on,
    channel_permissions,
    guild_permissions,
    names,
    parse,
    rank,
    to_string,
)

BITS = range(37)
ADMINISTRATOR_BIT, VIEW_CHANNEL_BIT, READ_MESSAGE_HISTORY_BIT = 3, 10, 16
USER, OTHER = 1, 2
DEFAULT_ROLE = 100
ROLE_IDS = [201, 202, 203, 204, 205, 206]
STALE = 999


# ---------------------------------------------------------------- the reference


def _override_state(override: Override, bit: int) -> str | None:
    """What one override says about one permission; a permission in both lists is denied (2.11)."""
    if (override.deny >> bit) & 1:
        return "deny"
    if (override.allow >> bit) & 1:
        return "allow"
    return None


def _apply_step(value: bool, overrides: list[Override], bit: int) -> bool:
    """'Remove the union of their deny, then add the union of their allow', for one permission."""
    states = [_override_state(o, bit) for o in overrides]
    if "deny" in states:
        value = False
    if "allow" in states:
        value = True
    return value


def reference_bit(bit: int, who: MemberContext, roles: GuildRoles, overrides: list[Override] | None) -> bool:
    """One permission for U; `overrides=None` means the guild-level check (steps 1-4, 7, 8)."""
    if who.is_instance_admin:  # 1
        return True
    if not who.is_member:  # 2
        return False
    if who.is_owner:  # 3
        return True
    held = [r for r in who.role_ids if r != roles.default_role_id and r in roles.permissions]

    def in_base(b: int) -> bool:  # 4
        masks = [roles.permissions[roles.default_role_id]] + [roles.permissions[r] for r in held]
        return any((m >> b) & 1 for m in masks)

    value = in_base(bit)
    # Overrides may not contain ADMINISTRATOR, so they never move that permission.
    if overrides is not None and bit != ADMINISTRATOR_BIT:
        default_ovs = [o for o in overrides if o.kind == "role" and o.target_id == roles.default_role_id]
        role_ovs = [o for o in overrides if o.kind == "role" and o.target_id in held]
        user_ovs = [o for o in overrides if o.kind == "member" and o.target_id == who.user_id]
        value = _apply_step(value, default_ovs, bit)  # 5, default role
        value = _apply_step(value, role_ovs, bit)  # 5, the other held roles
        value = _apply_step(value, user_ovs, bit)  # 6
    if in_base(ADMINISTRATOR_BIT):  # 7
        value = True
    if who.timed_out:  # 8
        value = value and bit in (VIEW_CHANNEL_BIT, READ_MESSAGE_HISTORY_BIT)
    return value


def reference_channel(who: MemberContext, roles: GuildRoles, overrides: list[Override]) -> int:
    bits = {bit: reference_bit(bit, who, roles, overrides) for bit in BITS}
    if not bits[VIEW_CHANNEL_BIT]:  # 9
        return 0
    return sum(1 << bit for bit, on in bits.items() if on)


def reference_guild(who: MemberContext, roles: GuildRoles) -> int:
    return sum(1 << bit for bit in BITS if reference_bit(bit, who, roles, None))


# ---------------------------------------------------------------- strategies

# Dense random masks rarely miss VIEW_CHANNEL; masks over a few "hot" bits make roles and overrides
# collide on the same permissions, which is where the order of the steps matters.
HOT_BITS = [ADMINISTRATOR_BIT, VIEW_CHANNEL_BIT, 11, 15, READ_MESSAGE_HISTORY_BIT, 36]


def _mask_of(bits) -> int:
    return sum(1 << b for b in bits)


any_masks = st.one_of(
    st.integers(0, int(ALL)),
    st.sets(st.sampled_from(HOT_BITS)).map(_mask_of),
    st.sets(st.sampled_from(list(BITS)), max_size=5).map(_mask_of),
    st.sampled_from([0, int(ALL), int(DEFAULT), 1 << VIEW_CHANNEL_BIT, 1 << ADMINISTRATOR_BIT]),
)
# For ordinary members: ADMINISTRATOR and a missing VIEW_CHANNEL would hide the override steps, so
# these masks are small, mostly over the hot bits, and rarely carry ADMINISTRATOR.
plain_masks = st.one_of(
    st.sets(st.sampled_from(HOT_BITS[1:]), max_size=3).map(_mask_of),
    st.sets(st.sampled_from(HOT_BITS), max_size=3).map(_mask_of),
)


@st.composite
def guilds(draw, masks=any_masks) -> GuildRoles:
    count = draw(st.integers(0, len(ROLE_IDS)))
    ids = ROLE_IDS[:count]
    positions = draw(st.permutations(range(1, count + 1))) if count else []
    return GuildRoles(
        default_role_id=DEFAULT_ROLE,
        permissions={DEFAULT_ROLE: draw(masks), **{r: draw(masks) for r in ids}},
        positions={DEFAULT_ROLE: 0, **dict(zip(ids, positions, strict=True))},
    )


def _held_ids(roles: GuildRoles):
    # The guild's roles, plus the default role (never listed, but must be harmless) and a deleted role.
    candidates = [*roles.permissions, STALE]
    return st.frozensets(st.sampled_from(candidates), max_size=len(candidates))


def members(roles: GuildRoles, user_id: int = USER):
    """Any combination of flags."""
    return st.builds(
        MemberContext,
        user_id=st.just(user_id),
        is_instance_admin=st.sampled_from([False, False, False, True]),
        is_member=st.sampled_from([True, True, True, False]),
        is_owner=st.sampled_from([False, False, False, True]),
        role_ids=_held_ids(roles),
        timed_out=st.sampled_from([False, False, True]),
    )


def plain_members(roles: GuildRoles):
    """Ordinary members, not timed out: every result comes from steps 4-7 and 9."""
    return st.builds(MemberContext, user_id=st.just(USER), role_ids=_held_ids(roles))


def overrides(roles: GuildRoles, masks=any_masks, max_size: int = 8):
    role_targets = st.sampled_from([*roles.permissions, STALE, USER])
    return st.lists(
        st.one_of(
            st.builds(Override, role_targets, st.just("role"), masks, masks),
            st.builds(Override, st.sampled_from([USER, OTHER, DEFAULT_ROLE]), st.just("member"), masks, masks),
        ),
        max_size=max_size,
    )


# ---------------------------------------------------------------- properties


@settings(max_examples=600, deadline=None)
@given(data=st.data())
def test_channel_permissions_match_reference(data):
    roles = data.draw(guilds())
    who = data.draw(members(roles))
    ovs = data.draw(overrides(roles))
    assert channel_permissions(who, roles, ovs) == reference_channel(who, roles, ovs)


@settings(max_examples=600, deadline=None)
@given(data=st.data())
def test_channel_permissions_match_reference_for_ordinary_members(data):
    roles = data.draw(guilds(plain_masks))
    who = data.draw(plain_members(roles))
    ovs = data.draw(overrides(roles, plain_masks, max_size=5))
    assert channel_permissions(who, roles, ovs) == reference_channel(who, roles, ovs)


@settings(max_examples=600, deadline=None)
@given(data=st.data())
def test_guild_permissions_match_reference(data):
    roles = data.draw(guilds())
    who = data.draw(members(roles))
    assert guild_permissions(who, roles) == reference_guild(who, roles)


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_room_permissions_never_exceed_guild_permissions_without_overrides(data):
    roles = data.draw(guilds())
    who = data.draw(members(roles))
    room = channel_permissions(who, roles, [])
    assert room & ~int(guild_permissions(who, roles)) == 0


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_acting_is_never_mutual(data):
    # Strict ranks: two members (neither an instance administrator) can never both act on each other.
    roles = data.draw(guilds())
    a = data.draw(members(roles, USER).filter(lambda m: not m.is_instance_admin))
    b = data.draw(members(roles, OTHER).filter(lambda m: not m.is_instance_admin))
    assert not (can_act_on(a, b, roles) and can_act_on(b, a, roles))
    assert actor_rank(a, roles) == rank(a, roles)


@given(mask=st.integers(0, int(ALL)))
def test_string_round_trip(mask):
    text = to_string(mask)
    assert parse(text) == mask
    assert text.split("|") == (names(mask) or [""])


@given(
    chosen=st.lists(st.sampled_from(names(ALL)), max_size=12),
    pads=st.lists(st.sampled_from(["", " ", "\t", "  \n"]), min_size=24, max_size=24),
)
def test_parse_ignores_order_whitespace_and_duplicates(chosen, pads):
    text = "|".join(f"{pads[2 * i % 24]}{name}{pads[(2 * i + 1) % 24]}" for i, name in enumerate(chosen))
    expected = sum({1 << names(ALL).index(n) for n in chosen})
    assert parse(text) == expected
    assert to_string(parse(text)) == "|".join(n for n in names(ALL) if n in chosen)
