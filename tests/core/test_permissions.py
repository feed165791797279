"""Permission flags, strings, computation and hierarchy (docs/reference/permissions.md), table-driven."""

from __future__ import annotations

import pytest

from meadhall.core.permissions import (
    ALL,
    BYPASS_RANK,
    DEFAULT,
    FLAGS,
    OWNER_RANK,
    TIMEOUT_MASK,
    GuildRoles,
    MemberContext,
    Override,
    Permission,
    actor_rank,
    base_permissions,
    can_act_on,
    can_grant,
    can_manage_role,
    can_reorder,
    can_timeout,
    channel_permissions,
    guild_permissions,
    has,
    missing,
    names,
    override_allowed,
    parse,
    rank,
    to_string,
    validate_override,
)

P = Permission

# ---------------------------------------------------------------- flags (1.1, 1.2)

API_NAMES = (
    "CREATE_INVITE KICK_MEMBERS BAN_MEMBERS ADMINISTRATOR MANAGE_CHANNELS MANAGE_GUILD ADD_REACTIONS "
    "VIEW_AUDIT_LOG PRIORITY_SPEAKER STREAM VIEW_CHANNEL SEND_MESSAGES SEND_SCREAMS MANAGE_MESSAGES "
    "EMBED_LINKS ATTACH_FILES READ_MESSAGE_HISTORY MENTION_EVERYONE USE_EXTERNAL_EMOJIS BYPASS_SLOWMODE "
    "CONNECT_VOICE SPEAK MUTE_MEMBERS DEAFEN_MEMBERS MOVE_MEMBERS USE_VAD CHANGE_NICKNAME MANAGE_NICKNAMES "
    "MANAGE_ROLES MANAGE_WEBHOOKS MANAGE_EMOJIS MANAGE_SOUNDS USE_SOUNDBOARD SEND_PRIVATE_MESSAGES "
    "MANAGE_CHANNEL_BACKGROUND MODERATE_MEMBERS VIDEO"
).split()

DEFAULT_STRING = (
    "CREATE_INVITE|ADD_REACTIONS|STREAM|VIEW_CHANNEL|SEND_MESSAGES|SEND_SCREAMS|EMBED_LINKS|ATTACH_FILES|"
    "READ_MESSAGE_HISTORY|USE_EXTERNAL_EMOJIS|CONNECT_VOICE|SPEAK|USE_VAD|CHANGE_NICKNAME|USE_SOUNDBOARD|"
    "SEND_PRIVATE_MESSAGES|VIDEO"
)


@pytest.mark.parametrize("bit,name", list(enumerate(API_NAMES)), ids=API_NAMES)
def test_bit_numbers_match_api_1_1(bit, name):
    assert P[name] == 1 << bit
    assert FLAGS[bit] is P[name]


def test_thirty_seven_flags_and_all():
    assert len(FLAGS) == 37
    assert ALL == 137438953471 == 2**37 - 1
    assert names(ALL) == API_NAMES


def test_default_set_value_and_names():
    assert DEFAULT == 81708572225
    assert to_string(DEFAULT) == DEFAULT_STRING
    assert len(names(DEFAULT)) == 17
    for absent in ("ADMINISTRATOR", "KICK_MEMBERS", "BAN_MEMBERS", "MANAGE_GUILD", "MODERATE_MEMBERS"):
        assert not has(DEFAULT, P[absent])


# ---------------------------------------------------------------- strings (0.12)


@pytest.mark.parametrize(
    "text,expected",
    [
        pytest.param("", 0, id="empty-is-zero"),
        pytest.param("   ", 0, id="only-whitespace-is-zero"),
        pytest.param("VIEW_CHANNEL", P.VIEW_CHANNEL, id="one-name"),
        pytest.param("SEND_MESSAGES|VIEW_CHANNEL", P.VIEW_CHANNEL | P.SEND_MESSAGES, id="any-order"),
        pytest.param(" VIEW_CHANNEL |\tSEND_MESSAGES\n", P.VIEW_CHANNEL | P.SEND_MESSAGES, id="whitespace"),
        pytest.param("VIEW_CHANNEL|VIEW_CHANNEL", P.VIEW_CHANNEL, id="duplicates"),
        pytest.param(DEFAULT_STRING, DEFAULT, id="default-set"),
        pytest.param("|".join(reversed(API_NAMES)), ALL, id="all-reversed"),
    ],
)
def test_parse(text, expected):
    assert parse(text) == expected


@pytest.mark.parametrize(
    "text,bad",
    [
        pytest.param("view_channel", "view_channel", id="lower-case"),
        pytest.param("VIEW_CHANNEL|Send_Messages", "Send_Messages", id="mixed-case"),
        pytest.param("VIEW_CHANNEL|NOPE", "NOPE", id="unknown"),
        pytest.param("ALL", "ALL", id="ALL-is-not-a-name"),
        pytest.param("VIEW_CHANNEL||SEND_MESSAGES", "''", id="empty-token"),
        pytest.param("VIEW_CHANNEL|", "''", id="trailing-bar"),
        pytest.param("VIEW_CHANNEL,SEND_MESSAGES", "VIEW_CHANNEL,SEND_MESSAGES", id="comma"),
    ],
)
def test_parse_refuses_unknown_names(text, bad):
    with pytest.raises(ValueError, match="unknown permission") as info:
        parse(text)
    assert bad in str(info.value)


@pytest.mark.parametrize(
    "mask,text",
    [
        pytest.param(0, "", id="empty"),
        pytest.param(P.SEND_MESSAGES | P.VIEW_CHANNEL, "VIEW_CHANNEL|SEND_MESSAGES", id="ascending"),
        pytest.param(P.VIDEO | P.CREATE_INVITE, "CREATE_INVITE|VIDEO", id="lowest-and-highest"),
        pytest.param(ALL, "|".join(API_NAMES), id="all"),
    ],
)
def test_to_string(mask, text):
    assert to_string(mask) == text
    assert parse(text) == mask


@pytest.mark.parametrize("mask", [-1, 1 << 37, ALL + 1], ids=["negative", "bit-37", "all-plus-one"])
def test_to_string_refuses_bits_outside_the_37(mask):
    with pytest.raises(ValueError):
        to_string(mask)


@pytest.mark.parametrize(
    "mask,required,has_it,first_missing",
    [
        pytest.param(ALL, P.SEND_MESSAGES, True, None, id="all-has-everything"),
        pytest.param(0, 0, True, None, id="nothing-required"),
        pytest.param(P.VIEW_CHANNEL, P.VIEW_CHANNEL | P.SEND_MESSAGES, False, P.SEND_MESSAGES, id="one-missing"),
        pytest.param(0, P.SEND_MESSAGES | P.VIEW_CHANNEL, False, P.VIEW_CHANNEL, id="lowest-bit-first"),
    ],
)
def test_has_and_missing(mask, required, has_it, first_missing):
    assert has(mask, required) is has_it
    assert missing(mask, required) == first_missing


def test_missing_names_the_flag():
    assert missing(0, P.MANAGE_ROLES).name == "MANAGE_ROLES"


# ---------------------------------------------------------------- a guild for the tables

USER, OTHER = 1, 2
EVERYONE = 100  # default role id = guild id
HELPER, MOD, ADMIN, TOP = 101, 102, 103, 104
STALE = 999  # held id of a deleted role

ROLES = GuildRoles(
    default_role_id=EVERYONE,
    permissions={
        EVERYONE: P.VIEW_CHANNEL | P.SEND_MESSAGES | P.READ_MESSAGE_HISTORY | P.CHANGE_NICKNAME,
        HELPER: P.ATTACH_FILES,
        MOD: P.KICK_MEMBERS | P.MANAGE_MESSAGES | P.MODERATE_MEMBERS | P.MANAGE_ROLES,
        ADMIN: P.ADMINISTRATOR,
        TOP: P.BAN_MEMBERS,
    },
    positions={EVERYONE: 0, HELPER: 1, MOD: 2, ADMIN: 3, TOP: 4},
)
BASE = ROLES.permissions[EVERYONE]

# A guild whose default role cannot view rooms.
HIDDEN = GuildRoles(
    default_role_id=EVERYONE,
    permissions={EVERYONE: P.SEND_MESSAGES | P.CHANGE_NICKNAME, HELPER: P.VIEW_CHANNEL, MOD: P.MANAGE_MESSAGES},
    positions={EVERYONE: 0, HELPER: 1, MOD: 2},
)


def member(*roles: int, **flags) -> MemberContext:
    return MemberContext(user_id=flags.pop("user_id", USER), role_ids=frozenset(roles), **flags)


def role_ov(target: int, allow: int = 0, deny: int = 0) -> Override:
    return Override(target, "role", allow, deny)


def user_ov(target: int, allow: int = 0, deny: int = 0) -> Override:
    return Override(target, "member", allow, deny)


V, S, R, A = P.VIEW_CHANNEL, P.SEND_MESSAGES, P.READ_MESSAGE_HISTORY, P.ATTACH_FILES

# ---------------------------------------------------------------- channel permissions (1.4)

CHANNEL_CASES = [
    # steps 1-3
    ("instance-admin-non-member-gets-all", member(is_instance_admin=True, is_member=False), ROLES, [], ALL),
    ("instance-admin-ignores-denies", member(is_instance_admin=True), ROLES, [user_ov(USER, deny=V | S)], ALL),
    ("instance-admin-not-timed-out", member(is_instance_admin=True, timed_out=True), ROLES, [], ALL),
    ("non-member-nothing", member(is_member=False), ROLES, [], 0),
    ("non-member-roles-ignored", member(ADMIN, is_member=False), ROLES, [], 0),
    ("non-member-user-override-ignored", member(is_member=False), ROLES, [user_ov(USER, allow=V | S)], 0),
    ("owner-all", member(is_owner=True), ROLES, [], ALL),
    ("owner-ignores-denies", member(is_owner=True), ROLES, [role_ov(EVERYONE, deny=V), user_ov(USER, deny=V)], ALL),
    ("owner-not-timed-out", member(is_owner=True, timed_out=True), ROLES, [], ALL),
    # step 4
    ("default-role-only", member(), ROLES, [], BASE),
    ("role-union", member(HELPER, MOD), ROLES, [], BASE | A | ROLES.permissions[MOD]),
    ("default-role-listed-is-harmless", member(EVERYONE, HELPER), ROLES, [], BASE | A),
    ("stale-role-grants-nothing", member(STALE), ROLES, [role_ov(STALE, allow=A)], BASE),
    ("default-role-listed-its-override-applies-once", member(EVERYONE, HELPER), ROLES,
     [role_ov(EVERYONE, allow=P.EMBED_LINKS), role_ov(HELPER, deny=P.EMBED_LINKS)], BASE | A),
    # step 5a: default-role override
    ("default-override-deny", member(), ROLES, [role_ov(EVERYONE, deny=S)], BASE & ~S),
    ("default-override-allow", member(), ROLES, [role_ov(EVERYONE, allow=A)], BASE | A),
    ("default-override-deny-then-allow", member(), ROLES, [role_ov(EVERYONE, allow=A, deny=S)], (BASE & ~S) | A),
    ("override-both-allow-and-deny-is-denied", member(), ROLES, [role_ov(EVERYONE, allow=S, deny=S)], BASE & ~S),
    ("default-override-deny-removes-role-grant", member(HELPER), ROLES, [role_ov(EVERYONE, deny=A)], BASE),
    # step 5b: other held roles
    ("held-role-allow-beats-default-deny", member(HELPER), ROLES,
     [role_ov(EVERYONE, deny=S), role_ov(HELPER, allow=S)], BASE | A),
    ("held-role-deny", member(HELPER), ROLES, [role_ov(HELPER, deny=S)], (BASE | A) & ~S),
    ("held-role-deny-beats-default-allow", member(HELPER), ROLES,
     [role_ov(EVERYONE, allow=P.EMBED_LINKS), role_ov(HELPER, deny=P.EMBED_LINKS)], BASE | A),
    ("allow-on-one-role-beats-deny-on-another", member(HELPER, MOD), ROLES,
     [role_ov(HELPER, deny=S), role_ov(MOD, allow=S)], BASE | A | ROLES.permissions[MOD]),
    ("deny-unions-across-roles", member(HELPER, MOD), ROLES,
     [role_ov(HELPER, deny=S), role_ov(MOD, deny=A)], (BASE | ROLES.permissions[MOD]) & ~S),
    ("override-of-unheld-role-ignored", member(), ROLES, [role_ov(MOD, deny=S), role_ov(HELPER, allow=A)], BASE),
    # step 6: user override
    ("user-override-deny-beats-role-allow", member(HELPER), ROLES,
     [role_ov(HELPER, allow=P.EMBED_LINKS), user_ov(USER, deny=P.EMBED_LINKS)], BASE | A),
    ("user-override-allow-beats-role-deny", member(HELPER), ROLES,
     [role_ov(EVERYONE, deny=S), role_ov(HELPER, deny=S), user_ov(USER, allow=S)], BASE | A),
    ("user-override-both-is-denied", member(), ROLES, [user_ov(USER, allow=S, deny=S)], BASE & ~S),
    ("other-user-override-ignored", member(), ROLES, [user_ov(OTHER, deny=S)], BASE),
    ("role-override-with-user-id-is-not-a-user-override", member(), ROLES, [role_ov(USER, deny=S)], BASE),
    # step 7: ADMINISTRATOR
    ("admin-role-gets-all", member(ADMIN), ROLES, [], ALL),
    ("admin-in-base-beats-every-deny", member(ADMIN), ROLES,
     [role_ov(EVERYONE, deny=ALL), role_ov(ADMIN, deny=ALL), user_ov(USER, deny=ALL)], ALL),
    ("admin-in-default-role", member(), GuildRoles(EVERYONE, {EVERYONE: P.ADMINISTRATOR}, {EVERYONE: 0}), [], ALL),
    ("admin-via-role-override-grants-nothing", member(), ROLES,
     [role_ov(EVERYONE, allow=P.ADMINISTRATOR)], BASE),
    ("admin-via-user-override-grants-nothing", member(), ROLES, [user_ov(USER, allow=P.ADMINISTRATOR)], BASE),
    # step 8: timeout (after 7)
    ("timeout-reduces-to-view-and-history", member(HELPER, MOD, timed_out=True), ROLES, [], V | R),
    ("timeout-keeps-only-what-is-held", member(timed_out=True), ROLES, [role_ov(EVERYONE, deny=R)], V),
    ("timeout-cannot-be-lifted-by-overrides", member(timed_out=True), ROLES, [user_ov(USER, allow=ALL & ~P.ADMINISTRATOR)], V | R),
    ("timeout-reduces-admin-holder", member(ADMIN, timed_out=True), ROLES, [], V | R),
    ("timeout-applies-after-admin", member(ADMIN, timed_out=True), ROLES, [role_ov(EVERYONE, deny=V | R)], V | R),
    # step 9: VIEW_CHANNEL
    ("no-view-voids-everything", member(HELPER), ROLES, [role_ov(EVERYONE, deny=V)], 0),
    ("no-view-in-base-voids-roles", member(MOD), HIDDEN, [], 0),
    ("view-from-role", member(HELPER, MOD), HIDDEN, [], V | S | P.CHANGE_NICKNAME | P.MANAGE_MESSAGES),
    ("view-from-override", member(MOD), HIDDEN, [role_ov(MOD, allow=V)], V | S | P.CHANGE_NICKNAME | P.MANAGE_MESSAGES),
    ("view-from-user-override", member(), HIDDEN, [user_ov(USER, allow=V)], V | S | P.CHANGE_NICKNAME),
    ("timed-out-without-view-gets-nothing", member(MOD, timed_out=True), HIDDEN, [], 0),
]


@pytest.mark.parametrize(
    "who,roles,overrides,expected", [c[1:] for c in CHANNEL_CASES], ids=[c[0] for c in CHANNEL_CASES]
)
def test_channel_permissions(who, roles, overrides, expected):
    got = channel_permissions(who, roles, overrides)
    assert got == expected, f"{to_string(got)!r} != {to_string(expected)!r}"


def test_timeout_mask_is_view_and_history():
    assert TIMEOUT_MASK == V | R


# ---------------------------------------------------------------- guild permissions (1.4 step 9)

GUILD_CASES = [
    ("instance-admin-non-member", member(is_instance_admin=True, is_member=False), ROLES, ALL),
    ("non-member", member(MOD, is_member=False), ROLES, 0),
    ("owner", member(is_owner=True), ROLES, ALL),
    ("owner-timed-out", member(is_owner=True, timed_out=True), ROLES, ALL),
    ("default-role", member(), ROLES, BASE),
    ("role-union", member(HELPER, MOD), ROLES, BASE | A | ROLES.permissions[MOD]),
    ("admin-role", member(ADMIN), ROLES, ALL),
    ("timed-out", member(MOD, timed_out=True), ROLES, V | R),
    ("timed-out-admin", member(ADMIN, timed_out=True), ROLES, V | R),
    ("no-view-rule-at-guild-level", member(MOD), HIDDEN, S | P.CHANGE_NICKNAME | P.MANAGE_MESSAGES),
    ("timed-out-without-view", member(MOD, timed_out=True), HIDDEN, 0),
]


@pytest.mark.parametrize("who,roles,expected", [c[1:] for c in GUILD_CASES], ids=[c[0] for c in GUILD_CASES])
def test_guild_permissions(who, roles, expected):
    assert guild_permissions(who, roles) == expected


def test_guild_level_ignores_room_overrides():
    who = member(MOD)
    room = [role_ov(EVERYONE, deny=P.MANAGE_MESSAGES | P.KICK_MEMBERS), user_ov(USER, deny=P.KICK_MEMBERS)]
    assert not has(channel_permissions(who, ROLES, room), P.KICK_MEMBERS)
    assert has(guild_permissions(who, ROLES), P.KICK_MEMBERS | P.MANAGE_MESSAGES)


def test_base_permissions_is_step_4_only():
    assert base_permissions(member(ADMIN), ROLES) == BASE | P.ADMINISTRATOR
    assert base_permissions(member(MOD, is_owner=True), ROLES) == BASE | ROLES.permissions[MOD]
    assert base_permissions(member(MOD, is_member=False), ROLES) == 0


# ---------------------------------------------------------------- hierarchy (1.5)

RANK_CASES = [
    ("default-role-only-is-0", member(), 0, 0),
    ("highest-held-position", member(HELPER, MOD), 2, 2),
    ("stale-role-ignored", member(STALE, HELPER), 1, 1),
    ("owner-above-everyone", member(is_owner=True), OWNER_RANK, OWNER_RANK),
    ("instance-admin-ordinary-rank-as-target", member(HELPER, is_instance_admin=True), 1, BYPASS_RANK),
]


@pytest.mark.parametrize("who,target_rank,acting_rank", [c[1:] for c in RANK_CASES], ids=[c[0] for c in RANK_CASES])
def test_rank(who, target_rank, acting_rank):
    assert rank(who, ROLES) == target_rank
    assert actor_rank(who, ROLES) == acting_rank


def test_owner_and_bypass_outrank_every_position():
    assert BYPASS_RANK > OWNER_RANK > max(ROLES.positions.values()) + 10_000


@pytest.mark.parametrize(
    "actor,role,allowed",
    [
        pytest.param(member(MOD), HELPER, True, id="strictly-below"),
        pytest.param(member(MOD), MOD, False, id="equal-position-refused"),
        pytest.param(member(MOD), ADMIN, False, id="above-refused"),
        pytest.param(member(), HELPER, False, id="default-only-member-manages-nothing"),
        pytest.param(member(is_owner=True), TOP, True, id="owner-manages-top-role"),
        pytest.param(member(is_instance_admin=True, is_member=False), TOP, True, id="instance-admin-bypasses"),
    ],
)
def test_can_manage_role(actor, role, allowed):
    assert can_manage_role(actor_rank(actor, ROLES), ROLES.positions[role]) is allowed


ACT_CASES = [
    ("higher-on-lower", member(MOD), member(HELPER, user_id=OTHER), True),
    ("on-default-only-member", member(HELPER), member(user_id=OTHER), True),
    ("equal-rank-refused", member(MOD), member(MOD, user_id=OTHER), False),
    ("lower-on-higher-refused", member(HELPER), member(MOD, user_id=OTHER), False),
    ("default-on-default-refused", member(), member(user_id=OTHER), False),
    ("never-on-self", member(TOP), member(TOP), False),
    ("owner-on-anyone", member(is_owner=True), member(TOP, ADMIN, user_id=OTHER), True),
    ("never-on-owner", member(TOP), member(is_owner=True, user_id=OTHER), False),
    ("instance-admin-bypasses-rank", member(is_instance_admin=True), member(TOP, user_id=OTHER), True),
    ("instance-admin-never-on-owner", member(is_instance_admin=True), member(is_owner=True, user_id=OTHER), False),
    ("instance-admin-never-on-self", member(is_instance_admin=True), member(is_instance_admin=True), False),
    ("instance-admin-target-has-ordinary-rank", member(MOD), member(HELPER, is_instance_admin=True, user_id=OTHER), True),
]


@pytest.mark.parametrize("actor,target,allowed", [c[1:] for c in ACT_CASES], ids=[c[0] for c in ACT_CASES])
def test_can_act_on(actor, target, allowed):
    assert can_act_on(actor, target, ROLES) is allowed


@pytest.mark.parametrize(
    "actor,target,allowed",
    [
        pytest.param(member(TOP), member(MOD, user_id=OTHER), True, id="below-without-admin"),
        pytest.param(member(TOP), member(ADMIN, user_id=OTHER), False, id="never-on-admin-holder"),
        pytest.param(member(is_owner=True), member(ADMIN, user_id=OTHER), False, id="owner-neither"),
        pytest.param(member(is_instance_admin=True), member(ADMIN, user_id=OTHER), False, id="instance-admin-neither"),
        pytest.param(member(TOP), member(TOP), False, id="never-on-self"),
        pytest.param(member(TOP), member(is_owner=True, user_id=OTHER), False, id="never-on-owner"),
        pytest.param(member(HELPER), member(MOD, user_id=OTHER), False, id="rank-rule-still-applies"),
    ],
)
def test_can_timeout(actor, target, allowed):
    assert can_timeout(actor, target, ROLES) is allowed


@pytest.mark.parametrize(
    "held,requested,allowed",
    [
        pytest.param(V | S, V, True, id="subset"),
        pytest.param(V | S, V | S, True, id="equal"),
        pytest.param(V | S, 0, True, id="empty"),
        pytest.param(V | S, V | A, False, id="one-not-held"),
        pytest.param(ALL & ~P.ADMINISTRATOR, P.ADMINISTRATOR, False, id="administrator-needs-administrator"),
        pytest.param(P.ADMINISTRATOR, ALL, True, id="administrator-holds-everything"),
        pytest.param(V | R, S, False, id="timed-out-grants-nothing-new"),
    ],
)
def test_can_grant(held, requested, allowed):
    assert can_grant(held, requested) is allowed


POSITIONS = ROLES.positions


@pytest.mark.parametrize(
    "actor_rank_,moves,allowed",
    [
        pytest.param(3, {HELPER: 2, MOD: 1}, True, id="swap-below"),
        pytest.param(3, {}, True, id="no-moves"),
        pytest.param(3, {HELPER: 3}, False, id="to-own-position-refused"),
        pytest.param(3, {HELPER: 4}, False, id="to-above-refused"),
        pytest.param(3, {ADMIN: 1}, False, id="move-own-level-refused"),
        pytest.param(3, {TOP: 1}, False, id="move-higher-role-refused"),
        pytest.param(3, {STALE: 1}, False, id="unknown-role-refused"),
        pytest.param(OWNER_RANK, {TOP: 1, HELPER: 4}, True, id="owner-moves-anything"),
    ],
)
def test_can_reorder(actor_rank_, moves, allowed):
    assert can_reorder(actor_rank_, moves, POSITIONS) is allowed


@pytest.mark.parametrize(
    "allow,deny",
    [
        pytest.param(P.ADMINISTRATOR, 0, id="allow-administrator"),
        pytest.param(0, P.ADMINISTRATOR, id="deny-administrator"),
        pytest.param(parse("ADMINISTRATOR|VIEW_CHANNEL"), 0, id="administrator-among-others"),
        pytest.param(1 << 37, 0, id="unknown-bit"),
        pytest.param(0, -1, id="negative"),
    ],
)
def test_validate_override_refuses(allow, deny):
    with pytest.raises(ValueError):
        validate_override(allow, deny)


def test_validate_override_accepts_everything_else():
    validate_override(ALL & ~P.ADMINISTRATOR, ALL & ~P.ADMINISTRATOR)
    validate_override(0, 0)


@pytest.mark.parametrize(
    "held,allow,deny,allowed",
    [
        pytest.param(V | S | P.MANAGE_ROLES, S, 0, True, id="allow-held"),
        pytest.param(V | S | P.MANAGE_ROLES, 0, S, True, id="deny-held"),
        pytest.param(V | S | P.MANAGE_ROLES, A, 0, False, id="allow-not-held"),
        pytest.param(V | S | P.MANAGE_ROLES, 0, A, False, id="deny-not-held"),
        pytest.param(V | S | P.MANAGE_ROLES, 0, 0, True, id="empty"),
        pytest.param(ALL, ALL & ~P.ADMINISTRATOR, 0, True, id="administrator-in-room-holds-all"),
    ],
)
def test_override_allowed(held, allow, deny, allowed):
    assert override_allowed(held, allow, deny) is allowed


def test_override_rule_uses_room_permissions():
    # MOD holds MANAGE_MESSAGES at guild level but the room denies it: they may not touch it there.
    who = member(MOD)
    room = [role_ov(MOD, deny=P.MANAGE_MESSAGES)]
    held = channel_permissions(who, ROLES, room)
    assert not override_allowed(held, 0, P.MANAGE_MESSAGES)
    assert override_allowed(held, 0, P.SEND_MESSAGES)
