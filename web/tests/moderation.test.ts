import { describe, expect, it } from "vitest";
import { GUILD_AUDIT_ACTIONS, actionLabel, describeEntry, type Names } from "../src/settings/guild/auditText";
import { EXPIRY_CHOICES, MAX_USES_CHOICES, expiryWords, spanWords, usesWords } from "../src/settings/guild/invites/words";
import {
  activeTimeout, assignableRoles, canActOn, holdsAdministrator, myRank, rankOf, TIMEOUTS, timeoutUntil,
} from "../src/settings/guild/members/rank";
import type { AuditEntry, GuildSnapshot, Member, Role, UserSummary } from "../src/lib/types";

const user = (id: string, name: string): UserSummary => ({
  id, username: name, display_name: name, avatar: null, bio: "", status: "online", custom_status: null,
  custom_status_emoji: null, badges: [], created_at: "2025-01-01T00:00:00.000Z", deleted: false,
});

const role = (id: string, name: string, position: number, permissions = ""): Role => ({
  id, guild_id: "10", name, color: 0, position, permissions, hoist: false, is_default: id === "10", frame_id: null, icon_id: null,
});

const member = (id: string, name: string, roles: string[] = [], timeout_until: string | null = null): Member => ({
  guild_id: "10", user: user(id, name), nick: null, roles, joined_at: "2025-01-01T00:00:00.000Z", timeout_until, style: null,
});

// Owner freya (1); me = thor (2) holding "mod" (2); loki (3) holding "helper" (1); odin (4) holding "top" (3);
// sif (5) holding "admins" (4, ADMINISTRATOR).
const guild = (me: Member): GuildSnapshot => ({
  id: "10", name: "Hall", description: null, icon_file_id: null, banner_file_id: null, splash_file_id: null, public: false, public_invite_code: null, is_main: false, owner_id: "1", member_count: 5,
  system_channel_id: "100", created_at: "2025-01-01T00:00:00.000Z", emojis: [], channels: [
    { id: "100", type: "text", guild_id: "10", name: "general", topic: null, position: 0, parent_id: null,
      slowmode_seconds: 0, user_limit: null, background_file_id: null, icon_file_id: null, dm_owner_id: null, permission_overrides: [], last_message_id: null, created_at: "2025-01-01T00:00:00.000Z" },
  ],
  roles: [role("10", "@user", 0, "SEND_MESSAGES"), role("11", "helper", 1), role("12", "mod", 2, "KICK_MEMBERS|BAN_MEMBERS"),
    role("13", "top", 3), role("14", "admins", 4, "ADMINISTRATOR")],
  member: me,
});

const thor = member("2", "thor", ["12"]);
const g = guild(thor);

describe("who may act on whom", () => {
  it("ranks members by their highest role, the owner above everyone", () => {
    expect(rankOf(g, "3", ["11"])).toBe(1);
    expect(rankOf(g, "4", ["11", "13"])).toBe(3);
    expect(rankOf(g, "6", [])).toBe(0);
    expect(rankOf(g, "1", [])).toBe(Infinity);
    expect(myRank(g, "2", false)).toBe(2);
    expect(myRank(g, "2", true)).toBe(Infinity);
  });

  it("acts only on members ranked strictly below, never on oneself or the owner", () => {
    expect(canActOn(g, "2", false, member("3", "loki", ["11"]))).toBe(true);
    expect(canActOn(g, "2", false, member("7", "peer", ["12"]))).toBe(false);
    expect(canActOn(g, "2", false, member("4", "odin", ["13"]))).toBe(false);
    expect(canActOn(g, "2", false, thor)).toBe(false);
    expect(canActOn(g, "2", false, member("1", "freya"))).toBe(false);
    // An instance administrator bypasses the ranks, but still not on the owner.
    expect(canActOn(g, "2", true, member("4", "odin", ["13"]))).toBe(true);
    expect(canActOn(g, "2", true, member("1", "freya"))).toBe(false);
    // The owner acts on anyone else.
    const owned = guild(member("1", "freya"));
    expect(canActOn(owned, "1", false, member("5", "sif", ["14"]))).toBe(true);
  });

  it("offers only roles below one's rank, never the default role", () => {
    expect(assignableRoles(g, "2", false).map((r) => r.name)).toEqual(["helper"]);
    expect(assignableRoles(guild(member("1", "freya")), "1", false).map((r) => r.name)).toEqual(["admins", "top", "mod", "helper"]);
  });

  it("knows ADMINISTRATOR holders, whom timeouts never reach", () => {
    expect(holdsAdministrator(g, member("5", "sif", ["14"]))).toBe(true);
    expect(holdsAdministrator(g, member("3", "loki", ["11"]))).toBe(false);
  });

  it("times out for the offered durations and reads only running timeouts", () => {
    expect(TIMEOUTS.map((t) => t.seconds)).toEqual([60, 300, 600, 3600, 86400, 604800]);
    const now = Date.parse("2025-03-01T12:00:00.000Z");
    expect(timeoutUntil(300, now)).toBe("2025-03-01T12:05:00.000Z");
    expect(activeTimeout({ timeout_until: "2025-03-01T12:05:00.000Z" }, now)).toBe("2025-03-01T12:05:00.000Z");
    expect(activeTimeout({ timeout_until: "2025-03-01T11:59:59.000Z" }, now)).toBeNull();
    expect(activeTimeout({ timeout_until: null }, now)).toBeNull();
  });
});

describe("invitations in words", () => {
  const now = Date.parse("2025-03-01T12:00:00.000Z");
  it("says how long an invitation lasts", () => {
    expect(expiryWords({ expires_at: null }, now)).toBe("Never expires");
    expect(expiryWords({ expires_at: "2025-03-01T12:30:00.000Z" }, now)).toBe("Expires in 30 minutes");
    expect(expiryWords({ expires_at: "2025-03-01T18:00:00.000Z" }, now)).toBe("Expires in 6 hours");
    expect(expiryWords({ expires_at: "2025-03-08T12:00:00.000Z" }, now)).toBe("Expires in 7 days");
    expect(expiryWords({ expires_at: "2025-03-01T11:00:00.000Z" }, now)).toBe("Expired");
    expect(spanWords(1000)).toBe("1 second");
    expect(spanWords(61000)).toBe("1 minute");
  });

  it("counts uses against the limit", () => {
    expect(usesWords({ uses: 0, max_uses: 1 })).toBe("0 of 1 uses");
    expect(usesWords({ uses: 1, max_uses: 0 })).toBe("1 use, no limit");
    expect(usesWords({ uses: 3, max_uses: 0 })).toBe("3 uses, no limit");
  });

  it("offers the expiries and limits the service takes", () => {
    expect(EXPIRY_CHOICES.map((c) => c.seconds)).toEqual([1800, 3600, 21600, 43200, 86400, 604800, 0]);
    for (const c of EXPIRY_CHOICES) expect(c.seconds).toBeLessThanOrEqual(604800);
    for (const c of MAX_USES_CHOICES) expect(c.uses).toBeLessThanOrEqual(100);
  });
});

describe("the audit log in words", () => {
  const people: Record<string, string> = { "1": "freya", "2": "thor", "3": "loki" };
  const names: Names = {
    user: (id) => people[id] ?? null,
    role: (id) => ({ "11": "helper", "12": "mod" })[id] ?? null,
    room: (id) => ({ "100": "general" })[id] ?? null,
    time: (iso) => `at ${iso.slice(11, 16)}`,
  };
  const entry = (action: string, extra: Partial<AuditEntry> = {}): AuditEntry => ({
    id: "900", action, guild_id: "10", actor_id: "2", actor: user("2", "thor"), target_type: "user", target_id: "3",
    reason: null, data: {}, created_at: "2025-03-01T12:00:00.000Z", ...extra,
  });

  it("names who did what to whom", () => {
    expect(describeEntry(entry("member.kick"), names)).toBe("thor kicked loki");
    expect(describeEntry(entry("member.ban", { reason: "spam" }), names)).toBe("thor banned loki");
    expect(describeEntry(entry("member.unban"), names)).toBe("thor unbanned loki");
    expect(describeEntry(entry("member.timeout", { data: { timeout_until: "2025-03-01T12:05:00.000Z" } }), names))
      .toBe("thor timed out loki until at 12:05");
    expect(describeEntry(entry("member.timeout_clear"), names)).toBe("thor removed the timeout of loki");
    expect(describeEntry(entry("member.role_add", { data: { role_id: "11" } }), names)).toBe("thor gave loki the role “helper”");
    expect(describeEntry(entry("member.role_remove", { data: { role_id: "99" } }), names)).toBe("thor took the role a deleted role from loki");
    expect(describeEntry(entry("member.nick_update", { data: { changes: { nick: [null, "Trickster"] } } }), names))
      .toBe("thor set the nickname of loki to “Trickster”");
    expect(describeEntry(entry("member.kick", { target_id: "42" }), names)).toBe("thor kicked a former member");
  });

  it("says themselves when the actor acted on their own membership", () => {
    const self = { target_id: "2" };
    expect(describeEntry(entry("member.role_add", { ...self, data: { role_id: "11" } }), names)).toBe("thor gave themselves the role “helper”");
    expect(describeEntry(entry("member.role_remove", { ...self, data: { role_id: "11" } }), names)).toBe("thor gave up the role “helper”");
    expect(describeEntry(entry("member.nick_update", { ...self, data: { changes: { nick: ["Thunder", "Thor"] } } }), names))
      .toBe("thor changed their nickname from “Thunder” to “Thor”");
    expect(describeEntry(entry("member.nick_update", { ...self, data: { changes: { nick: ["Thor", null] } } }), names))
      .toBe("thor removed their nickname");
    // The same ids on another kind of target are not a person acting on themselves.
    expect(describeEntry(entry("member.role_add", { target_type: "role", target_id: "2", data: { role_id: "11" } }), names))
      .not.toContain("themselves");
  });

  it("spells out changes to the server, rooms and roles", () => {
    const renamed = entry("guild.update", { actor: user("1", "freya"), target_type: "guild", target_id: "10",
      data: { changes: { name: ["A", "B"] } } });
    expect(describeEntry(renamed, names)).toBe("freya changed the server name from “A” to “B”");
    const two = entry("guild.update", { data: { changes: { description: [null, "Mead"], icon_file_id: [null, "77"] } } });
    expect(describeEntry(two, names)).toBe("thor changed the description from nothing to “Mead” and set the icon");
    expect(describeEntry(entry("guild.update", { data: { changes: { public: [false, true], public_invite_code: [null, "x"] } } }), names))
      .toBe("thor listed the server as public");
    expect(describeEntry(entry("channel.create", { target_type: "channel", target_id: "101", data: { name: "memes", type: "text" } }), names))
      .toBe("thor created the room #memes");
    expect(describeEntry(entry("channel.update", { target_type: "channel", target_id: "100", data: { changes: { topic: [null, "Skål"] } } }), names))
      .toBe("thor changed #general: the topic from nothing to “Skål”");
    expect(describeEntry(entry("channel.delete", { target_type: "channel", target_id: "101", data: { name: "memes" } }), names))
      .toBe("thor deleted the room #memes");
    expect(describeEntry(entry("role.create", { target_type: "role", target_id: "12", data: { name: "mod" } }), names))
      .toBe("thor created the role “mod”");
    expect(describeEntry(entry("channel.override_update", { target_type: "channel", target_id: "100", data: { target_id: "11", type: "role" } }), names))
      .toBe("thor changed the permissions of the role “helper” in #general");
  });

  it("names invitations, templates, messages and the system", () => {
    expect(describeEntry(entry("invite.create", { target_type: "invite", target_id: null, data: { code: "abcd1234", channel_id: "100" } }), names))
      .toBe("thor created the invitation abcd1234 for #general");
    expect(describeEntry(entry("invite.delete", { target_type: "invite", target_id: null, data: { code: "abcd1234" } }), names))
      .toBe("thor deleted the invitation abcd1234");
    expect(describeEntry(entry("template.create", { target_type: "template", data: { name: "Longhouse" } }), names))
      .toBe("thor saved the server as the template “Longhouse”");
    expect(describeEntry(entry("message.delete", { target_type: "message", data: { channel_id: "100", author_id: "3" } }), names))
      .toBe("thor deleted a message by loki in #general");
    expect(describeEntry(entry("guild.create", { actor: null, actor_id: null, data: { template_id: "personal:5" } }), names))
      .toBe("The system created the server from a template");
    expect(describeEntry(entry("emoji.create", { data: {} }), names)).toBe("thor added an emoji");
    expect(describeEntry(entry("emoji.create", { data: { name: "mead" } }), names)).toBe("thor added the emoji “mead”");
  });

  it("has a sentence and a label for every guild action of the catalogue", () => {
    expect(new Set(GUILD_AUDIT_ACTIONS.map((a) => a.action)).size).toBe(GUILD_AUDIT_ACTIONS.length);
    for (const { action, label } of GUILD_AUDIT_ACTIONS) {
      expect(actionLabel(action)).toBe(label);
      const text = describeEntry(entry(action), names);
      expect(text.startsWith("thor ")).toBe(true);
      expect(text).not.toContain(action);
      expect(text).not.toContain("undefined");
    }
    expect(describeEntry(entry("something.new"), names)).toBe("thor: something.new");
  });
});

describe("one's own timeout arrives live", () => {
  it("MEMBER_UPDATE for oneself updates the membership the composer reads, and permissions mask until it ends", async () => {
    const { applyEvent, createState } = await import("../src/lib/state");
    const { P, has, permissionsIn } = await import("../src/lib/permissions");
    const state = createState();
    const me = member("3", "loki");
    const hall = guild(me);
    state.me = { ...user("3", "loki"), status: "online", email: "loki@example.com", totp_enabled: false, is_instance_admin: false, locale: "en", timezone: "UTC", onboarding_completed_at: null, last_seen_at: null, password_reset_required: false };
    applyEvent(state, "GUILD_CREATE", hall);
    const until = new Date(Date.now() + 300_000).toISOString();
    applyEvent(state, "MEMBER_UPDATE", { ...me, timeout_until: until });
    expect(state.guilds["10"].member.timeout_until).toBe(until);
    expect(has(permissionsIn(state.guilds["10"], "3", false), P.SEND_MESSAGES)).toBe(false);
    applyEvent(state, "MEMBER_UPDATE", { ...me, timeout_until: null });
    expect(has(permissionsIn(state.guilds["10"], "3", false), P.SEND_MESSAGES)).toBe(true);
  });
});
