"""The registry of derived state: every value the database or a process works out from other rows and keeps.

Two kinds. A *column* is kept by database triggers (created by migrations), so no Python that causes a
change can be seen moving it: the registry names the triggers, as they exist in a migrated database, and the
modules that rely on the column. A *cache* is a per-process `db/kept.VersionedCache` of something read from
the database, kept under one of those columns (its version) and used only while the version read in the
current transaction is the one it was kept at, so a change made on any node shows on the next request.

Every cache must have its entry here (a VersionedCache refuses a name it does not find), and every entry names
the test that proves a change made elsewhere (another node, or SQL behind the service's back) shows.
`make docs` renders the registry into docs/reference/derived-state.md; tests/db/test_derived.py checks that the
tests exist, that the triggers exist on SQLite and PostgreSQL, and that the caches are the only LRU.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class AfterWrite(Enum):
    """May a cache keep what a transaction that already wrote rows read? Such a transaction may raise a version
    that never commits, and a later commit could take the same number: by default it may not."""

    NEVER = "never: the transaction may hold a version that never commits"
    STAMP_NEVER_REPEATS = "yes: the stamp never repeats, so a rolled-back one matches nothing later"
    SOURCES_UNWRITTEN = "yes: its one caller writes none of the rows the version follows"


@dataclass(frozen=True)
class Triggers:
    """Trigger names per database, as `sqlite_master` and `pg_trigger` list them."""

    sqlite: tuple[str, ...]
    postgres: tuple[str, ...]


@dataclass(frozen=True)
class Column:
    """A value kept by triggers."""

    name: str
    holds: str
    column: str
    triggers: Triggers
    relied_on_by: tuple[str, ...]
    proof: str  # pytest node id: a change written behind the service's back shows


@dataclass(frozen=True)
class Cache:
    """A per-process cache (db/kept.VersionedCache) of values read under a version."""

    name: str
    holds: str
    version: str  # the name of the Column entry the values are kept under
    bound: int
    unit: str  # what the bound counts
    after_write: AfterWrite
    module: str  # the module that builds the cache
    relied_on_by: tuple[str, ...]
    proof: str  # pytest node id: a change made on another node (or behind the service's back) shows


def _both(*names: str) -> Triggers:
    return Triggers(names, names)


_PERM_TABLES = ("members", "member_roles", "roles")
_ROW_OPS = ("insert", "update", "delete")
_STYLE_OPS = ("insert", "delete", "update")
_MESSAGE_VERSION = _both("mv_messages_insert", "mv_messages_update", "mv_messages_delete")

COLUMNS: dict[str, Column] = {c.name: c for c in (
    Column(
        "perm_version",
        "a number that rises with every change of what decides permissions in a guild: members (timeouts "
        "included), held roles, roles, rooms created or deleted, overrides, the owner, a member's "
        "instance-administrator flag",
        "guilds.perm_version",
        Triggers(
            (*(f"pv_{t}_{op}" for t in _PERM_TABLES for op in _ROW_OPS), "pv_channels_insert", "pv_channels_delete",
             *(f"pv_permission_overrides_{op}" for op in _ROW_OPS), "pv_guilds_owner", "pv_users_admin"),
            (*(f"pv_{t}" for t in _PERM_TABLES), "pv_channels", "pv_permission_overrides", "pv_guilds_owner",
             "pv_users_admin")),
        ("meadhall.realtime.guild_state", "meadhall.guilds.access", "meadhall.guilds.members.queries",
         "meadhall.voice.state", "meadhall.push.settings.recipients"),
        "tests/guilds/test_permission_cache.py::test_owner_and_admin_flags_changed_elsewhere_apply_at_once",
    ),
    Column(
        "message_version",
        "a number that rises with every insert, update and delete of a room's messages, in the writing "
        "transaction (the flags `reacted` and `has_attachments` included)",
        "channels.message_version",
        _MESSAGE_VERSION,
        ("meadhall.messages.page_cache", "meadhall.social.conversations.last_messages",
         "meadhall.social.conversations.views"),
        "tests/messages/test_page_cache.py::test_a_change_made_directly_in_the_database_shows_too",
    ),
    Column(
        "last_message_id",
        "the newest message of a room that is not `private`",
        "channels.last_message_id",
        _both("mv_messages_insert"),
        ("meadhall.social.conversations.queries", "meadhall.guilds.rooms.views"),
        "tests/messages/test_private.py::test_private_messages_do_not_move_last_message_id",
    ),
    Column(
        "has_private",
        "true once a room held a `private` message (its pages differ per viewer); never cleared",
        "channels.has_private",
        _both("mv_messages_insert"),
        ("meadhall.messages.page_cache", "meadhall.social.conversations.queries"),
        "tests/messages/test_page_cache.py::test_private_messages_stay_per_viewer_whoever_reads_first",
    ),
    Column(
        "reacted",
        "true once a message had a reaction (pages ask for reactions of these only); never cleared",
        "messages.reacted",
        _both("mf_reactions_insert"),
        ("meadhall.messages.hydrate",),
        "tests/messages/test_reactions.py::test_history_page_shows_reactions_exactly_where_they_are",
    ),
    Column(
        "has_attachments",
        "true once a file was bound to a message (pages ask for files of these only); never cleared",
        "messages.has_attachments",
        _both("mf_files_insert", "mf_files_bind"),
        ("meadhall.messages.hydrate", "meadhall.messages.edit", "meadhall.messages.purge",
         "meadhall.porting.archive.export_read"),
        "tests/db/test_migrations.py::test_0010_flags_existing_reactions_and_attachments_and_keeps_search",
    ),
    Column(
        "auth_epoch",
        "a number (one row) that rises whenever a session is deleted or its token or step-up changes, and "
        "whenever an account's ban, deletion or instance-administrator flag changes",
        "auth_epoch.value",
        _both("ae_sessions_delete", "ae_sessions_update", "ae_users_delete", "ae_users_update"),
        ("meadhall.auth.sessions",),
        "tests/accounts/test_session_cache.py::test_session_deleted_in_the_database_applies_to_the_next_request",
    ),
    Column(
        "relationship_stamp",
        "a value never used before, taken whenever a relationship row of the user is written",
        "relationship_stamps.stamp",
        _both(*(f"rs_relationships_{op}" for op in _ROW_OPS)),
        ("meadhall.social.relationships.queries", "meadhall.social.relationships.friends"),
        "tests/social/test_friend_stamps.py::test_every_change_of_a_users_own_relationship_rows_gives_a_stamp_never_seen",
    ),
    Column(
        "style_count",
        "the number of the user's `user_styles` rows (no style: no style lookup)",
        "users.style_count",
        _both(*(f"sc_user_styles_{op}" for op in _STYLE_OPS)),
        ("meadhall.guilds.members.service", "meadhall.accounts.presence"),
        "tests/customisation/test_styles.py::test_the_style_count_follows_every_style_and_a_profile_change_still_carries_them",
    ),
    Column(
        "room_days",
        "the number of messages of each room per UTC day of their id (the instance statistics)",
        "room_days.messages",
        Triggers(("room_days_insert", "room_days_delete", "room_days_update"),
                 ("room_days_insert_delete", "room_days_update")),
        ("meadhall.admin.stats.queries",),
        "tests/db/test_migrations.py::test_0020_counts_existing_messages_per_room_and_day_then_keeps_counting",
    ),
    Column(
        "messages_search",
        "the FTS5 trigram index of messages.content_norm (SQLite; PostgreSQL uses a trigram index, no trigger)",
        "messages_search",
        Triggers(("messages_search_insert", "messages_search_delete", "messages_search_update"), ()),
        ("meadhall.messages.search",),
        "tests/messages/test_search.py::test_edited_messages_are_found_by_new_text_and_deleted_ones_vanish",
    ),
    Column(
        "users_search",
        "the FTS5 trigram index of users.username_norm and display_name_norm (SQLite; PostgreSQL uses trigram "
        "indexes, no trigger)",
        "users_search",
        Triggers(("users_search_insert", "users_search_delete", "users_search_update"), ()),
        ("meadhall.admin.users.queries",),
        "tests/admin/test_users_list.py::test_search_follows_a_renamed_display_name_and_quotes",
    ),
    Column(
        "user_name_grams",
        "how many accounts have each string of one or two characters in their names (totals of short searches)",
        "user_name_grams.users",
        Triggers(("user_name_grams_insert", "user_name_grams_delete", "user_name_grams_update"),
                 ("user_name_grams_insert_delete", "user_name_grams_update")),
        ("meadhall.admin.users.queries",),
        "tests/admin/test_users_list.py::test_totals_of_short_parts_follow_registrations_renames_and_removals",
    ),
)}

CACHES: dict[str, Cache] = {c.name: c for c in (
    Cache(
        "guild_states",
        "everything that decides permissions in one guild (members, held roles, roles, overrides, owner)",
        "perm_version",
        4096, "guilds",
        AfterWrite.NEVER,
        "meadhall.realtime.guild_state",
        ("meadhall.guilds.access", "meadhall.voice.state", "meadhall.push.settings.recipients"),
        "tests/guilds/test_permission_cache.py::test_override_written_elsewhere_applies_at_once",
    ),
    Cache(
        "profile_audiences",
        "who hears of a user's profile change in each of their guilds (MEMBER_UPDATE), under the versions "
        "of all of them",
        "perm_version",
        1_000_000, "member ids",
        AfterWrite.SOURCES_UNWRITTEN,  # a profile change writes the users row alone
        "meadhall.guilds.members.audiences",
        ("meadhall.guilds.members.service",),
        "tests/gateway/test_two_nodes.py::test_a_profile_change_on_one_node_reaches_a_member_who_joined_through_the_other",
    ),
    Cache(
        "history_pages",
        "what a history page shows that is the same for every viewer (per viewer in a room that held a "
        "private message), and the last answer encoded from it with the author summaries it showed (given "
        "again while they compare equal and the page has no reactions); a page of 50 messages takes about "
        "85 KiB plus 35 KiB encoded, some 15 MiB in all",
        "message_version",
        128, "pages",
        AfterWrite.NEVER,
        "meadhall.messages.page_cache",
        ("meadhall.messages.history",),
        "tests/messages/test_page_cache.py::test_a_node_sees_changes_made_on_another",
    ),
    Cache(
        "last_messages",
        "what the last message of a conversation list shows that is the same for every viewer; one message "
        "takes about 2.2 KiB, some 9 MiB in all",
        "message_version",
        4096, "messages",
        AfterWrite.NEVER,
        "meadhall.social.conversations.last_messages",
        ("meadhall.social.conversations.views",),
        "tests/social/test_conversation_last_kept.py::test_a_node_sees_changes_made_on_another",
    ),
    Cache(
        "friends",
        "each user's friends' ids (presence receivers), some 40 MB of integers at most",
        "relationship_stamp",
        1_000_000, "friend ids",
        AfterWrite.STAMP_NEVER_REPEATS,
        "meadhall.social.relationships.friends",
        ("meadhall.accounts.presence",),
        "tests/gateway/test_two_nodes.py::test_friends_kept_by_one_node_follow_a_block_and_a_friendship_made_on_the_other",
    ),
    Cache(
        "sessions",
        "a presented session with its account's state, answered from memory while nothing is due",
        "auth_epoch",
        20_000, "sessions",
        AfterWrite.NEVER,  # kept from reads outside any writing transaction
        "meadhall.auth.sessions",
        ("meadhall.auth.deps",),
        "tests/accounts/test_session_cache.py::test_logout_on_one_node_applies_to_the_next_request_on_another",
    ),
)}


def entries() -> list[Column | Cache]:
    """Every entry, columns first, each kind by name."""
    return [*sorted(COLUMNS.values(), key=lambda c: c.name), *sorted(CACHES.values(), key=lambda c: c.name)]
