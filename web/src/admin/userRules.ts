// Which actions the user detail view offers, and why one is not: the service's rules for instance
// administration (OpenAPI: banInstanceUser, resetInstanceUser2fa, createInstanceUserTemporaryPassword,
// deleteInstanceUser), so that a forbidden action is disabled with its reason instead of failing.

import { t } from "../i18n/index.svelte";
import type { AdminServer, AdminUser } from "./types";

export type UserAction = "ban" | "unban" | "reset2fa" | "tempPassword" | "logoutAll" | "grantAdmin" | "revokeAdmin" | "delete";

/** `null` when the action is offered; otherwise the reason in words. An action that does not apply to the
 * user's state at all (unban when not banned) is `"hidden"`. */
export type Verdict = null | "hidden" | string;

export function verdicts(target: AdminUser, meId: string | undefined, servers: AdminServer[]): Record<UserAction, Verdict> {
  const self = target.id === meId;
  const otherAdmin = !self && target.is_instance_admin;
  const deleted = target.deleted_at !== null;
  const owned = servers.filter((s) => s.guild.owner_id === target.id).length;
  const gone = t("admin.rules.deleted");
  const admin = t("admin.rules.otherAdmin");
  const guard = (v: Verdict): Verdict => (deleted ? gone : v);
  // An imported author holds history brought from another service: nobody may ever sign in as it.
  const imported = target.badges.includes("imported");
  const noSignIn = t("admin.rules.imported");
  return {
    ban: target.banned_at ? "hidden" : guard(self ? t("admin.rules.banSelf") : otherAdmin ? admin : null),
    unban: target.banned_at ? guard(null) : "hidden",
    reset2fa: !target.totp_enabled ? "hidden" : guard(otherAdmin ? admin : null),
    tempPassword: guard(imported ? noSignIn : otherAdmin ? admin : null),
    logoutAll: guard(null),
    grantAdmin: target.is_instance_admin ? "hidden"
      : guard(imported ? noSignIn : target.banned_at ? t("admin.rules.unbanFirst") : null),
    revokeAdmin: target.is_instance_admin ? guard(null) : "hidden",
    delete: guard(self ? t("admin.rules.deleteSelf")
      : otherAdmin ? admin
        : owned ? t("admin.rules.owns", { count: owned })
          : null),
  };
}

/** The badges a user row shows: `kind` names the badge (its CSS class), `label` is its words. */
export function userBadgeList(u: AdminUser): { kind: string; label: string }[] {
  const out: { kind: string; label: string }[] = [];
  if (u.is_instance_admin) out.push({ kind: "administrator", label: t("admin.badge.administrator") });
  if (u.badges.includes("imported")) out.push({ kind: "imported", label: t("admin.badge.imported") });
  if (u.banned_at) out.push({ kind: "banned", label: t("admin.badge.banned") });
  if (u.deleted_at) out.push({ kind: "deleted", label: t("admin.badge.deleted") });
  if (u.totp_enabled) out.push({ kind: "2fa", label: t("admin.badge.twoFactor") });
  return out;
}

/** The badges a user row shows, in words. */
export function userBadges(u: AdminUser): string[] {
  return userBadgeList(u).map((b) => b.label);
}


/** The file name of a download from its Content-Disposition header, else a dated default. */
export function downloadName(disposition: string | null, now: Date = new Date()): string {
  const star = disposition?.match(/filename\*=UTF-8''([^;]+)/i);
  if (star) return decodeURIComponent(star[1]);
  const plain = disposition?.match(/filename="?([^";]+)"?/i);
  if (plain) return plain[1];
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `audit-${stamp}.csv`;
}
