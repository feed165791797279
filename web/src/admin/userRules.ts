// Which actions the user detail view offers, and why one is not: the service's rules for instance
// administration (OpenAPI: banInstanceUser, resetInstanceUser2fa, createInstanceUserTemporaryPassword,
// deleteInstanceUser), so that a forbidden action is disabled with its reason instead of failing.

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
  const gone = "The account is deleted.";
  const admin = "Not for another administrator: remove their administration first.";
  const guard = (v: Verdict): Verdict => (deleted ? gone : v);
  // An imported author holds history brought from another service: nobody may ever sign in as it.
  const imported = target.badges.includes("imported");
  const noSignIn = "An imported author never signs in: hand its history to the person's account with meadhall claim-imported.";
  return {
    ban: target.banned_at ? "hidden" : guard(self ? "You cannot ban yourself." : otherAdmin ? admin : null),
    unban: target.banned_at ? guard(null) : "hidden",
    reset2fa: !target.totp_enabled ? "hidden" : guard(otherAdmin ? admin : null),
    tempPassword: guard(imported ? noSignIn : otherAdmin ? admin : null),
    logoutAll: guard(null),
    grantAdmin: target.is_instance_admin ? "hidden"
      : guard(imported ? noSignIn : target.banned_at ? "Unban the account first." : null),
    revokeAdmin: target.is_instance_admin ? guard(null) : "hidden",
    delete: guard(self ? "You cannot delete your own account here."
      : otherAdmin ? admin
        : owned ? `Owns ${owned === 1 ? "a server" : `${owned} servers`}: transfer or delete ${owned === 1 ? "it" : "them"} first.`
          : null),
  };
}

/** The badges a user row shows, in words. */
export function userBadges(u: AdminUser): string[] {
  const out: string[] = [];
  if (u.is_instance_admin) out.push("Administrator");
  if (u.badges.includes("imported")) out.push("Imported");
  if (u.banned_at) out.push("Banned");
  if (u.deleted_at) out.push("Deleted");
  if (u.totp_enabled) out.push("2FA");
  return out;
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
