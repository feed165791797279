import { describe, expect, it } from "vitest";
import { usersQuery } from "./api";
import { instanceActionLabel } from "./auditWords";
import type { AdminUser } from "./types";
import { userBadges, verdicts } from "./userRules";
import { isImported } from "../lib/profileCard.svelte";

function user(over: Partial<AdminUser> = {}): AdminUser {
  return {
    id: "300", username: "old_thor", display_name: "Thor", avatar: null, bio: "", status: "online", custom_status: null,
    custom_status_emoji: null, badges: ["imported"], created_at: "2026-01-01T00:00:00.000Z", email: "",
    totp_enabled: false, is_instance_admin: false, locale: "en", timezone: "UTC", onboarding_completed_at: null, last_seen_at: null, password_reset_required: false,
    banned_at: null, ban_reason: null, banned_by: null, deleted_at: null,
    session_count: 0, guild_count: 1, ...over,
  };
}

describe("imported authors in the administration", () => {
  it("asks for imported authors only when the filter is on", () => {
    expect(usersQuery({ q: "", bannedOnly: false, importedOnly: true }).imported).toBe("true");
    expect(usersQuery({ q: "", bannedOnly: false, importedOnly: false }).imported).toBeUndefined();
    expect(usersQuery({ q: "", bannedOnly: false }).imported).toBeUndefined();
  });

  it("shows the badge in words", () => {
    expect(userBadges(user())).toEqual(["Imported"]);
    expect(userBadges(user({ badges: [] }))).toEqual([]);
  });

  it("offers no temporary password nor administration, but ban and deletion", () => {
    const v = verdicts(user(), "1", []);
    expect(v.tempPassword).toMatch(/never signs in/);
    expect(v.grantAdmin).toMatch(/claim-imported/);
    expect(v.ban).toBeNull();
    expect(v.delete).toBeNull();
    expect(verdicts(user({ badges: [] }), "1", []).tempPassword).toBeNull();
  });

  it("names the porting actions of the audit log", () => {
    expect(instanceActionLabel("guild.import")).toBe("Server imported");
    expect(instanceActionLabel("instance.user_claim")).toBe("Imported history handed to an account");
  });

  it("tells an imported author by its badge", () => {
    expect(isImported({ badges: ["imported"] })).toBe(true);
    expect(isImported({ badges: ["instance_admin"] })).toBe(false);
    expect(isImported(null)).toBe(false);
  });
});
