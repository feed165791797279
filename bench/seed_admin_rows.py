"""The rows of the instance-administration data set (bench/seed_admin.py writes them): every id, time, name
and text drawn from one seeded RNG and one `now`, so that the same seed version builds the same data set.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

USERS = 100_000
BANNED = 200
DELETED = 100
GUILDS = 300
ROOMS_PER_GUILD = 2
MEMBERS_PER_GUILD = (20, 600)
MESSAGES = 1_000_000
MESSAGE_DAYS = 60
AUDIT = 250_000
AUDIT_DAYS = 365
AUDIT_ACTORS = 2_000
SESSIONS = 20_000
FILES = 20_000
BATCH = 5_000

FIRST = ("anna boris clara dmitri elena fyodor galina hans ingrid jonas karin leif marta nils olga pavel "
         "quentin rosa sven tatiana ulrich vera wolfgang xenia yuri zoe astrid bjorn dagny erik freya gunnar "
         "helga ivar jorunn knut liv magnus nora oskar ragnhild sigrid thor unni vidar").split()
LAST = ("smith ivanov muller larsen berg dahl eriksen fischer hansen jensen karlsson lund nilsen olsen "
        "petrov quist rasmussen sorensen thorsen vogel weber young zimmermann andersen bakken christensen "
        "dalby eklund falk gran holm isaksen johansen kvist lind moen nygaard ostby paulsen").split()
WORDS = ("the and mead hall feast king sword shield gold silver night morning mountain river forest village "
         "castle tower bridge ship storm thunder fire ice stone iron bread honey ale song story journey road "
         "market winter dragon hello world friend guest").split()
AUDIT_ACTIONS = (
    ("channel.update", "channel"), ("channel.create", "channel"), ("role.update", "role"),
    ("member.role_add", "user"), ("member.kick", "user"), ("member.ban", "user"), ("member.timeout", "user"),
    ("message.delete", "message"), ("message.pin", "message"), ("invite.create", "invite"),
    ("emoji.create", "emoji"), ("webhook.create", "webhook"), ("guild.update", "guild"),
    ("voice.mute", "user"), ("limits.bypass", "channel"),
)
INSTANCE_ACTIONS = (
    ("instance.user_ban", "user"), ("instance.user_unban", "user"), ("instance.user_logout_all", "user"),
    ("instance.user_session_revoke", "session"), ("instance.settings_update", "settings"),
)


def snowflake(ms: int, seq: int) -> int:
    """An id made at unix time `ms` (node 1022: never a live server's); seq keeps ids of one ms apart."""
    from meadhall.core.ids import EPOCH_MS

    return ((ms - EPOCH_MS) << 22) | (1022 << 12) | (seq & 0xFFF)


def at(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


class Plan:
    """Every id and time of the data set, from one seeded RNG and one `now`."""

    def __init__(self, now_ms: int, admin_id: int) -> None:
        self.rng = random.Random(20261127)
        self.now_ms = now_ms
        self.admin_id = admin_id
        day = 86_400_000
        # Users joined over the last two years, in id order (ids follow created_at).
        span = 730 * day
        self.user_ms = sorted(now_ms - span + self.rng.randrange(span - day) for _ in range(USERS))
        self.user_ids = [snowflake(ms, i) for i, ms in enumerate(self.user_ms)]
        self.guild_ids = [snowflake(now_ms - 400 * day + i * 60_000, i) for i in range(GUILDS)]
        self.room_ids = [snowflake(now_ms - 400 * day + i * 60_000 + 1, i) for i in range(GUILDS * ROOMS_PER_GUILD)]
        self.members: dict[int, list[int]] = {}


# ---- rows ---------------------------------------------------------------------------------------------


def user_rows(plan: Plan, keys: Any, password_hash: str) -> Iterator[list[dict[str, Any]]]:
    from meadhall.core.crypto import blind_index, encrypt
    from meadhall.core.text import norm

    rng = plan.rng
    banned = set(rng.sample(range(USERS), BANNED))
    deleted = set(rng.sample(sorted(set(range(USERS)) - banned), DELETED))
    batch: list[dict[str, Any]] = []
    for i, (uid, ms) in enumerate(zip(plan.user_ids, plan.user_ms, strict=True)):
        first, last = FIRST[i % len(FIRST)], LAST[(i // len(FIRST)) % len(LAST)]
        username = f"{first}.{last}{i}"
        display = f"{first.title()} {last.title()} {i % 997}"
        email = f"{username}@mail{i % 50}.bench.example"
        seen = plan.now_ms - int(rng.expovariate(1 / (20 * 86_400_000)))
        row = {
            "id": uid, "username": username, "username_norm": norm(username),
            "email_enc": encrypt(keys.email_enc, email, aad=str(uid).encode()),
            "email_index": blind_index(keys.email_index, norm(email)), "password_hash": password_hash,
            "display_name": display, "display_name_norm": norm(display), "bio": "", "status": "online",
            "custom_status": None, "custom_status_emoji": None, "locale": "en", "timezone": "Europe/Moscow",
            "avatar_file_id": None, "totp_enabled": False, "totp_secret_enc": None, "totp_last_step": None,
            "totp_pending_enc": None, "totp_pending_expires_at": None, "onboarding_completed_at": at(ms),
            "is_instance_admin": False, "password_reset_required": False,
            "last_seen_at": at(max(ms, seen)), "created_at": at(ms),
            "banned_at": None, "ban_reason": None, "banned_by": None, "deleted_at": None,
        }
        if i in banned:
            row.update(banned_at=at(plan.now_ms - rng.randrange(1, 300) * 86_400_000),
                       ban_reason=f"spam wave {i % 7}", banned_by=plan.admin_id)
        if i in deleted:
            row.update(deleted_at=at(plan.now_ms - rng.randrange(1, 300) * 86_400_000))
        batch.append(row)
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def guild_rows(plan: Plan) -> tuple[list[dict[str, Any]], ...]:
    from meadhall.core.text import norm
    from meadhall.guilds.structure import Structure

    rng = plan.rng
    default_permissions = Structure().default_permissions
    guilds: list[dict[str, Any]] = []
    roles: list[dict[str, Any]] = []
    rooms: list[dict[str, Any]] = []
    members: list[dict[str, Any]] = []
    for g, gid in enumerate(plan.guild_ids):
        created = at(plan.now_ms - 400 * 86_400_000 + g * 60_000)
        count = int(MEMBERS_PER_GUILD[0] + (MEMBERS_PER_GUILD[1] - MEMBERS_PER_GUILD[0]) * rng.random() ** 3)
        who = rng.sample(plan.user_ids, count)
        owner = who[0]
        plan.members[gid] = who
        name = f"{rng.choice(WORDS).title()} {rng.choice(WORDS).title()} Hall {g}"
        first_room = plan.room_ids[g * ROOMS_PER_GUILD]
        guilds.append({
            "id": gid, "name": name, "name_norm": norm(name), "description": None, "icon_file_id": None,
            "banner_file_id": None, "splash_file_id": None, "owner_id": owner, "member_count": count,
            "system_channel_id": first_room, "public": g % 5 == 0, "public_invite_code": None, "is_main": False,
            "created_at": created,
        })
        roles.append({"id": gid, "guild_id": gid, "name": "@everyone", "color": 0, "position": 0,
                      "permissions": default_permissions, "hoist": False, "frame_id": None, "icon_id": None,
                      "is_default": True, "created_at": created})
        for r in range(ROOMS_PER_GUILD):
            rooms.append({
                "id": plan.room_ids[g * ROOMS_PER_GUILD + r], "guild_id": gid, "type": "text",
                "name": ("general", "chatter")[r], "topic": None, "position": r, "parent_id": None,
                "slowmode_seconds": 0, "user_limit": None, "background_file_id": None, "icon_file_id": None,
                "dm_owner_id": None, "is_group": False, "dm_pair": None, "last_message_id": None,
                "created_at": created,
            })
        members.extend({"guild_id": gid, "user_id": uid, "nick": None, "nick_norm": None, "joined_at": created,
                        "timeout_until": None} for uid in who)
    return guilds, roles, rooms, members


def message_rows(plan: Plan) -> Iterator[list[dict[str, Any]]]:
    from meadhall.core.text import norm

    rng = plan.rng
    rooms = plan.room_ids
    # A few busy rooms and a long tail (Zipf-like), so that the top-guilds ranking has something to rank.
    weights = [1 / (rank + 1) ** 0.9 for rank in range(len(rooms))]
    rng.shuffle(weights)
    room_of = rng.choices(range(len(rooms)), weights, k=MESSAGES)
    start = plan.now_ms - MESSAGE_DAYS * 86_400_000
    step = MESSAGE_DAYS * 86_400_000 / MESSAGES
    batch: list[dict[str, Any]] = []
    for i in range(MESSAGES):
        ms = start + int(i * step)
        r = room_of[i]
        gid = plan.guild_ids[r // ROOMS_PER_GUILD]
        content = " ".join(rng.choices(WORDS, k=rng.randint(2, 9)))
        batch.append({
            "id": snowflake(ms, i), "channel_id": rooms[r], "guild_id": gid,
            "author_id": rng.choice(plan.members[gid]), "webhook_id": None, "webhook_name": None,
            "webhook_avatar": None, "content": content, "content_norm": norm(content), "kind": "normal",
            "recipient_id": None, "system_event": None, "nonce": None, "reply_to_id": None, "mentions": [],
            "mention_channels": [], "mention_everyone": False, "suppress_embeds": False, "pinned": False,
            "pinned_at": None, "created_at": at(ms), "edited_at": None,
        })
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def audit_rows(plan: Plan) -> Iterator[list[dict[str, Any]]]:
    """Audit entries oldest first: 90 % guild actions, 10 % instance actions; a few thousand actors with a
    skew (moderators of busy guilds write most entries); targets among all users."""
    rng = plan.rng
    actors = rng.sample(plan.user_ids, AUDIT_ACTORS)
    actor_weights = [1 / (rank + 1) for rank in range(AUDIT_ACTORS)]
    start = plan.now_ms - AUDIT_DAYS * 86_400_000
    step = AUDIT_DAYS * 86_400_000 / AUDIT
    batch: list[dict[str, Any]] = []
    for i in range(AUDIT):
        ms = start + int(i * step)
        if rng.random() < 0.9:
            action, target_type = rng.choice(AUDIT_ACTIONS)
            guild_id: int | None = rng.choice(plan.guild_ids)
            actor: int | None = rng.choices(actors, actor_weights)[0]
        else:
            action, target_type = rng.choice(INSTANCE_ACTIONS)
            guild_id, actor = None, plan.admin_id if rng.random() < 0.8 else None
        target = rng.choice(plan.user_ids) if target_type == "user" else rng.getrandbits(60)
        batch.append({
            "id": snowflake(ms, i), "action": action, "guild_id": guild_id, "actor_id": actor,
            "target_type": target_type, "target_id": None if target_type in ("invite", "settings") else target,
            "reason": f"reason {i % 50}" if i % 4 == 0 else None,
            "data": {"changes": {"name": [f"old{i % 13}", f"new{i % 17}"]}} if i % 3 == 0 else {},
            "created_at": at(ms),
        })
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def session_rows(plan: Plan) -> list[dict[str, Any]]:
    rng = plan.rng
    rows = []
    for i, uid in enumerate(rng.choices(plan.user_ids[:-1000], k=SESSIONS)):
        ms = plan.now_ms - rng.randrange(1, 25 * 86_400_000)
        rows.append({
            "id": snowflake(ms, i), "user_id": uid, "token_hash": secrets.token_hex(32), "token_created_at": at(ms),
            "prev_token_hash": None, "prev_valid_until": None, "created_at": at(ms), "last_used_at": at(ms),
            "ip": f"10.{i % 250}.{i % 200}.{i % 100}", "user_agent": "bench", "method": "password",
            "step_up_expires_at": None,
        })
    return rows


def file_rows(plan: Plan, message_ids: list[int], message_rooms: dict[int, tuple[int, int]]) -> list[dict[str, Any]]:
    rng = plan.rng
    rows = []
    for i, mid in enumerate(rng.sample(message_ids, FILES)):
        room, gid = message_rooms[mid]
        ms = (mid >> 22) + 1_704_067_200_000
        rows.append({
            "id": snowflake(ms, i + 7), "purpose": "attachment", "uploader_id": None,
            "original_name": f"photo{i}.png", "content_type": "image/png", "size": rng.randint(10_000, 5_000_000),
            "sha256": secrets.token_hex(32), "meta": {}, "guild_id": gid, "channel_id": room,
            "message_id": mid, "position": 0, "owner": "message", "owner_id": mid, "owner_key": None,
            "created_at": at(ms),
        })
    return rows
