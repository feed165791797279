import { describe, expect, it } from "vitest";
import { P, bits, names } from "../src/lib/permissions";
import type { Channel, GuildSnapshot, Role } from "../src/lib/types";
import { PERMISSIONS, PERMISSION_GROUPS, ROOM_PERMISSIONS, permissionsOf } from "../src/settings/guild/permissionText";
import { movePayload, siblingsOf, slowmodeLabel, SLOWMODE_CHOICES } from "../src/settings/guild/rooms/order";
import { allowedChange, draftOf, overrideBody, replaceOverride, triOf, withTri } from "../src/settings/guild/rooms/overrides";
import { canEditRole, colorHex, colorValue, rankOf, roleMovePayload, sortedRoles, TOP_RANK } from "../src/settings/guild/roles/order";

const channel = (id: string, extra: Partial<Channel> = {}): Channel => ({
  id, type: "text", guild_id: "1", name: `room${id}`, topic: null, position: 0, parent_id: null, slowmode_seconds: 0,
  user_limit: null, background_file_id: null, icon_file_id: null, dm_owner_id: null, permission_overrides: [], last_message_id: null, created_at: "2025-01-01T00:00:00.000Z", ...extra,
});

const role = (id: string, position: number, extra: Partial<Role> = {}): Role => ({
  id, guild_id: "1", name: `role${id}`, color: 0, position, permissions: "", hoist: false, is_default: false, frame_id: null, icon_id: null, ...extra,
});

const guildWith = (roles: Role[], memberRoles: string[], owner = "99"): GuildSnapshot => ({
  id: "1", name: "Hall", description: null, icon_file_id: null, banner_file_id: null, splash_file_id: null, public: false, public_invite_code: null, is_main: false, owner_id: owner, member_count: 2, system_channel_id: null,
  created_at: "2025-01-01T00:00:00.000Z", roles, channels: [], emojis: [],
  member: { guild_id: "1", user: { id: "5" } as never, nick: null, roles: memberRoles, joined_at: "", timeout_until: null, style: null },
});

describe("permission texts", () => {
  it("names and explains each of the 37 permissions once, in bit order", () => {
    expect(PERMISSIONS).toHaveLength(37);
    PERMISSIONS.forEach((p, i) => {
      expect(p.bit).toBe(1n << BigInt(i));
      expect(p.label.length).toBeGreaterThan(2);
      expect(p.explain).toMatch(/\.$/);
    });
    expect(new Set(PERMISSIONS.map((p) => p.label)).size).toBe(37);
    expect(PERMISSION_GROUPS.flatMap((g) => permissionsOf(g)).length).toBe(37);
  });

  it("offers only room permissions in overrides, never ADMINISTRATOR or server-wide ones", () => {
    const room = new Set(ROOM_PERMISSIONS.map((p) => p.name));
    expect(room.has("ADMINISTRATOR")).toBe(false);
    for (const guildOnly of ["MANAGE_GUILD", "KICK_MEMBERS", "BAN_MEMBERS", "MODERATE_MEMBERS", "VIEW_AUDIT_LOG",
      "MANAGE_EMOJIS", "MANAGE_SOUNDS", "CHANGE_NICKNAME", "MANAGE_NICKNAMES"]) expect(room.has(guildOnly)).toBe(false);
    for (const inRoom of ["VIEW_CHANNEL", "SEND_MESSAGES", "CONNECT_VOICE", "MANAGE_ROLES", "MANAGE_CHANNELS"]) expect(room.has(inRoom)).toBe(true);
  });
});

describe("override tri-state", () => {
  it("reads allow, deny and inherit; a permission in both sets counts as denied", () => {
    const d = draftOf({ allow: "SEND_MESSAGES|ATTACH_FILES", deny: "ATTACH_FILES|VIEW_CHANNEL" });
    expect(triOf(d, P.SEND_MESSAGES)).toBe("allow");
    expect(triOf(d, P.ATTACH_FILES)).toBe("deny");
    expect(triOf(d, P.VIEW_CHANNEL)).toBe("deny");
    expect(triOf(d, P.ADD_REACTIONS)).toBe("inherit");
    expect(overrideBody("role", d)).toEqual({ type: "role", allow: "SEND_MESSAGES", deny: "VIEW_CHANNEL|ATTACH_FILES" });
  });

  it("moves one permission between the states and leaves the others", () => {
    let d = draftOf(undefined);
    d = withTri(d, P.VIEW_CHANNEL, "deny");
    d = withTri(d, P.SEND_MESSAGES, "allow");
    expect(overrideBody("member", d)).toEqual({ type: "member", allow: "SEND_MESSAGES", deny: "VIEW_CHANNEL" });
    d = withTri(d, P.VIEW_CHANNEL, "allow");
    expect(names(d.allow)).toBe("VIEW_CHANNEL|SEND_MESSAGES");
    expect(d.deny).toBe(0n);
    d = withTri(d, P.SEND_MESSAGES, "inherit");
    expect(overrideBody("role", d)).toEqual({ type: "role", allow: "VIEW_CHANNEL", deny: "" });
  });

  it("allows changing only permissions the caller holds", () => {
    const before = draftOf(undefined);
    const held = bits("VIEW_CHANNEL|SEND_MESSAGES");
    expect(allowedChange(before, withTri(before, P.VIEW_CHANNEL, "deny"), held)).toBe(true);
    expect(allowedChange(before, withTri(before, P.MANAGE_MESSAGES, "allow"), held)).toBe(false);
  });

  it("replaces, adds and removes an override in the room's list as the event will show it", () => {
    const c = channel("10", { permission_overrides: [{ id: "7", type: "role", allow: "", deny: "SEND_MESSAGES" }] });
    const added = replaceOverride(c, "8", "member", withTri(draftOf(undefined), P.VIEW_CHANNEL, "deny"));
    expect(added).toEqual([{ id: "7", type: "role", allow: "", deny: "SEND_MESSAGES" }, { id: "8", type: "member", allow: "", deny: "VIEW_CHANNEL" }]);
    expect(replaceOverride(c, "7", "role", null)).toEqual([]);
  });
});

describe("room reordering", () => {
  const chans = [
    channel("1", { type: "category", position: 0, name: "A" }),
    channel("2", { type: "category", position: 1, name: "B" }),
    channel("3", { position: 0, parent_id: "1" }),
    channel("4", { position: 1, parent_id: "1" }),
    channel("5", { position: 2, parent_id: "1" }),
    channel("6", { position: 0, parent_id: null }),
    channel("7", { position: 0, parent_id: "2" }),
  ];

  it("moves among the rooms of the same category only", () => {
    expect(siblingsOf(chans, chans[3]).map((c) => c.id)).toEqual(["3", "4", "5"]);
    expect(siblingsOf(chans, chans[0]).map((c) => c.id)).toEqual(["1", "2"]);
    expect(siblingsOf(chans, chans[5]).map((c) => c.id)).toEqual(["6"]);
  });

  it("sends only the changed positions, or nothing at an end", () => {
    expect(movePayload(siblingsOf(chans, chans[4]), "5", -1)).toEqual([{ id: "5", position: 1 }, { id: "4", position: 2 }]);
    expect(movePayload(siblingsOf(chans, chans[2]), "3", -1)).toBeNull();
    expect(movePayload(siblingsOf(chans, chans[4]), "5", 1)).toBeNull();
    expect(movePayload(siblingsOf(chans, chans[0]), "1", 1)).toEqual([{ id: "2", position: 0 }, { id: "1", position: 1 }]);
  });

  it("numbers tied siblings again so the order is what was shown", () => {
    const tied = [channel("20", { position: 5 }), channel("21", { position: 5 }), channel("22", { position: 5 })];
    expect(movePayload(siblingsOf(tied, tied[2]), "22", -1)).toEqual([
      { id: "20", position: 0 }, { id: "22", position: 1 }, { id: "21", position: 2 },
    ]);
  });

  it("words slowmode", () => {
    expect(SLOWMODE_CHOICES.map((c) => c.seconds)).toEqual([0, 5, 10, 30, 60, 300, 900, 3600, 21600]);
    expect(slowmodeLabel(300)).toBe("5 minutes");
    expect(slowmodeLabel(120)).toBe("2 minutes");
    expect(slowmodeLabel(7)).toBe("7 seconds");
  });
});

describe("roles by rank", () => {
  const roles = [role("1", 0, { is_default: true, name: "@user" }), role("a", 1), role("b", 2), role("c", 3), role("d", 4)];

  it("lists the highest first and the default role last", () => {
    expect(sortedRoles(roles).map((r) => r.id)).toEqual(["d", "c", "b", "a", "1"]);
  });

  it("ranks the owner above all and others by their highest role", () => {
    expect(rankOf(guildWith(roles, ["a", "c"]), "5", false)).toBe(3);
    expect(rankOf(guildWith(roles, []), "5", false)).toBe(0);
    expect(rankOf(guildWith(roles, ["a"], "5"), "5", false)).toBe(TOP_RANK);
    expect(rankOf(guildWith(roles, []), "5", true)).toBe(TOP_RANK);
    expect(canEditRole(roles[2], 3)).toBe(true);
    expect(canEditRole(roles[3], 3)).toBe(false);
    expect(canEditRole(roles[0], 0)).toBe(true); // the default role's permissions
  });

  it("sends the whole order of the movable roles, bottom-up from 1", () => {
    expect(roleMovePayload(roles, TOP_RANK, "b", 1)).toEqual([
      { id: "a", position: 1 }, { id: "c", position: 2 }, { id: "b", position: 3 }, { id: "d", position: 4 },
    ]);
    expect(roleMovePayload(roles, TOP_RANK, "a", -1)).toBeNull();
    expect(roleMovePayload(roles, TOP_RANK, "1", 1)).toBeNull();
    // Below rank 3 only a and b move, and never above it.
    expect(roleMovePayload(roles, 3, "a", 1)).toEqual([{ id: "b", position: 1 }, { id: "a", position: 2 }]);
    expect(roleMovePayload(roles, 3, "b", 1)).toBeNull();
    expect(roleMovePayload(roles, 3, "c", -1)).toBeNull();
  });

  it("converts colours", () => {
    expect(colorHex(0x3e7bff)).toBe("#3e7bff");
    expect(colorHex(255)).toBe("#0000ff");
    expect(colorValue("#ff0080")).toBe(0xff0080);
  });
});
