import { describe, expect, it } from "vitest";
import { auditFilterProblem, auditQuery, exportUrl, NO_AUDIT_FILTERS, nextDay, usersQuery } from "./api";
import { dataSummary, instanceActionLabel } from "./auditWords";
import type { AdminServer, AdminUser } from "./types";
import { downloadName, userBadges, verdicts } from "./userRules";

function user(over: Partial<AdminUser> = {}): AdminUser {
  return {
    id: "200", username: "thor", display_name: "Thor", avatar: null, bio: "", status: "online", custom_status: null,
    custom_status_emoji: null, badges: [], created_at: "2026-01-01T00:00:00.000Z", email: "thor@example.org",
    totp_enabled: false, is_instance_admin: false, locale: "en", timezone: "UTC", onboarding_completed_at: null, last_seen_at: null, password_reset_required: false,
    banned_at: null, ban_reason: null, banned_by: null, deleted_at: null,
    session_count: 1, guild_count: 0, ...over,
  };
}

function owned(ownerId: string, n: number): AdminServer[] {
  return Array.from({ length: n }, (_, i) => ({
    guild: { id: `${900 + i}`, owner_id: ownerId, name: `G${i}` } as AdminServer["guild"], roles: [], joined_at: "2026-01-01T00:00:00Z",
  }));
}

describe("users query", () => {
  it("searches names, or an exact email when the text is an address", () => {
    expect(usersQuery({ q: "  thor ", bannedOnly: false })).toEqual({ limit: 50, q: "thor", email: undefined, banned: undefined, before: undefined });
    expect(usersQuery({ q: "Thor@Example.org", bannedOnly: true }, "123")).toEqual({
      limit: 50, q: undefined, email: "Thor@Example.org", banned: "true", before: "123" });
    expect(usersQuery({ q: "", bannedOnly: false }).q).toBeUndefined();
    expect(usersQuery({ q: "@thor", bannedOnly: false }).q).toBe("@thor");
  });
});

describe("audit filters", () => {
  it("become the query: ids trimmed, the inclusive until becomes the exclusive next day", () => {
    expect(auditQuery(NO_AUDIT_FILTERS)).toEqual({});
    expect(auditQuery({ action: "instance.user_ban", actor: " 12 ", target: "34", guild: "", from: "2026-02-28", until: "2026-02-28" }))
      .toEqual({ action: "instance.user_ban", actor_id: "12", target_id: "34", from: "2026-02-28", to: "2026-03-01" });
  });

  it("roll over months and years", () => {
    expect(nextDay("2026-12-31")).toBe("2027-01-01");
    expect(nextDay("2028-02-28")).toBe("2028-02-29");
  });

  it("are refused in words before asking", () => {
    expect(auditFilterProblem(NO_AUDIT_FILTERS)).toBeNull();
    expect(auditFilterProblem({ ...NO_AUDIT_FILTERS, actor: "thor" })).toBe("Done by: enter an id (digits only).");
    expect(auditFilterProblem({ ...NO_AUDIT_FILTERS, guild: "1x" })).toBe("Server: enter an id (digits only).");
    expect(auditFilterProblem({ ...NO_AUDIT_FILTERS, from: "2026-03-02", until: "2026-03-01" })).toBe("Until must not be before From.");
    expect(auditFilterProblem({ ...NO_AUDIT_FILTERS, from: "2026-03-01", until: "2026-03-01" })).toBeNull();
  });

  it("give the export address without a cursor", () => {
    expect(exportUrl(NO_AUDIT_FILTERS)).toBe("/api/v1/instance/audit-logs/export");
    expect(exportUrl({ ...NO_AUDIT_FILTERS, action: "instance.user_ban", until: "2026-01-31" }))
      .toBe("/api/v1/instance/audit-logs/export?action=instance.user_ban&to=2026-02-01");
  });
});

describe("download name", () => {
  it("comes from Content-Disposition, else a dated default", () => {
    expect(downloadName('attachment; filename="audit-20260101-120000.csv"')).toBe("audit-20260101-120000.csv");
    expect(downloadName("attachment; filename*=UTF-8''audit%20x.csv")).toBe("audit x.csv");
    expect(downloadName(null, new Date("2026-11-27T20:05:09Z"))).toBe("audit-20261127-200509.csv");
  });
});

describe("user actions", () => {
  it("offers everything on an ordinary account", () => {
    const v = verdicts(user(), "1", []);
    expect(v).toEqual({ ban: null, unban: "hidden", reset2fa: "hidden", tempPassword: null, logoutAll: null, grantAdmin: null,
      revokeAdmin: "hidden", delete: null });
  });

  it("never bans or deletes yourself, but lets you sign yourself out", () => {
    const v = verdicts(user({ id: "1", is_instance_admin: true, totp_enabled: true }), "1", []);
    expect(v.ban).toBe("You cannot ban yourself.");
    expect(v.delete).toBe("You cannot delete your own account here.");
    expect(v.reset2fa).toBeNull();
    expect(v.logoutAll).toBeNull();
    expect(v.revokeAdmin).toBeNull();
    expect(v.grantAdmin).toBe("hidden");
  });

  it("protects another administrator", () => {
    const v = verdicts(user({ is_instance_admin: true, totp_enabled: true }), "1", []);
    for (const a of ["ban", "reset2fa", "tempPassword", "delete"] as const) expect(v[a]).toMatch(/another administrator/);
    expect(v.revokeAdmin).toBeNull();
  });

  it("unbans a banned account and explains an owner cannot be deleted", () => {
    const v = verdicts(user({ banned_at: "2026-01-02T00:00:00Z" }), "1", owned("200", 2));
    expect(v.ban).toBe("hidden");
    expect(v.unban).toBeNull();
    expect(v.grantAdmin).toBe("Unban the account first.");
    expect(v.delete).toBe("Owns 2 servers: transfer or delete them first.");
    expect(verdicts(user(), "1", owned("200", 1)).delete).toBe("Owns a server: transfer or delete it first.");
    expect(verdicts(user(), "1", owned("999", 1)).delete).toBeNull();
  });

  it("offers nothing on a deleted account", () => {
    const v = verdicts(user({ deleted_at: "2026-01-03T00:00:00Z" }), "1", []);
    expect(Object.values(v).filter((x) => x !== "hidden").every((x) => x === "The account is deleted.")).toBe(true);
  });

  it("names the badges", () => {
    expect(userBadges(user({ is_instance_admin: true, banned_at: "x", totp_enabled: true }))).toEqual(["Administrator", "Banned", "2FA"]);
    expect(userBadges(user({ deleted_at: "x" }))).toEqual(["Deleted"]);
  });
});

describe("audit words", () => {
  it("labels instance and server actions and keeps unknown ones", () => {
    expect(instanceActionLabel("instance.user_ban")).toBe("User banned from the instance");
    expect(instanceActionLabel("member.kick")).toBe("Member kicked");
    expect(instanceActionLabel("something.new")).toBe("something.new");
  });

  it("summarises data in one line", () => {
    expect(dataSummary({})).toBe("");
    expect(dataSummary(null)).toBe("");
    expect(dataSummary({ changes: { name: ["Old", "New"], is_main: [false, true] }, code: "abc" }))
      .toBe("name: Old → New; is main: false → true; code: abc");
    expect(dataSummary({ x: "y".repeat(500) }, 40).length).toBe(40);
  });
});
