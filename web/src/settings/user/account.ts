// The calls of the user settings (OpenAPI: updateMe, setAvatar, removeAvatar, completeOnboarding,
// changePassword, setupTwoFactor, enableTwoFactor, disableTwoFactor, regenerateBackupCodes, listSessions,
// revokeSession, logoutAll, listSecurityEvents). Each answer that carries the user is applied as its
// USER_UPDATE would be, so every screen shows the change at once.

import { api } from "../../lib/api";
import { applyEvent } from "../../lib/state";
import { withStepUp } from "../../lib/stepup.svelte";
import { endSession, store } from "../../lib/store.svelte";
import type { SecurityEvent, Session, User } from "../../lib/types";

function applied(user: User): User {
  applyEvent(store, "USER_UPDATE", user);
  return user;
}

export type ProfileChanges = Partial<Pick<User, "display_name" | "bio" | "status" | "custom_status" | "custom_status_emoji" | "locale" | "timezone">>;

export async function saveProfile(changes: ProfileChanges): Promise<User> {
  const { user } = await api.patch<{ user: User }>("/users/@me", changes);
  return applied(user);
}

export async function completeOnboarding(body: { display_name: string; bio?: string; locale?: string }): Promise<User> {
  const { user } = await api.post<{ user: User }>("/users/@me/onboarding/complete", body);
  return applied(user);
}

/** The cropped avatar as a multipart `file` (the same way a group icon is sent). */
export async function uploadAvatar(blob: Blob, name: string): Promise<User> {
  const { user } = await api.upload<{ user: User }>("/users/@me/avatar", blob, { name, retries: 0, reword: (envelope) => {
    if (envelope.code === "file.unsupported_type") return { ...envelope, message: "That file is not an image the server accepts." };
    if (envelope.code === "file.too_large") return { ...envelope, message: `The picture is too large for this server. ${envelope.message ?? ""}`.trim() };
    return envelope;
  } });
  return applied(user);
}

export async function removeAvatar(): Promise<User> {
  const { user } = await api.del<{ user: User }>("/users/@me/avatar");
  return applied(user);
}

// ---- password and two-factor authentication ----------------------------------------------------------

export async function changePassword(newPassword: string): Promise<void> {
  await withStepUp("Changing your password needs your current password.", () =>
    api.post("/auth/password", { new_password: newPassword }));
  // The change clears a temporary password's flag (the answer is empty): the prompt to change it goes.
  if (store.me) store.me.password_reset_required = false;
}

export interface TwoFactorSetup {
  secret: string;
  otpauth_url: string;
  qr_png: string;
}

export async function setupTwoFactor(): Promise<TwoFactorSetup> {
  return api.post<TwoFactorSetup>("/auth/2fa/setup");
}

export async function enableTwoFactor(code: string): Promise<string[]> {
  const { user, backup_codes } = await api.post<{ user: User; backup_codes: string[] }>("/auth/2fa/enable", {
    totp_code: code.replace(/\s+/g, ""),
  });
  applied(user);
  return backup_codes;
}

export async function disableTwoFactor(body: { totp_code: string } | { backup_code: string }): Promise<void> {
  const { user } = await withStepUp("Turning off two-factor authentication needs your password and a code.", () =>
    api.post<{ user: User }>("/auth/2fa/disable", body));
  applied(user);
}

export async function regenerateBackupCodes(): Promise<string[]> {
  const { backup_codes } = await withStepUp("New backup codes replace the old ones: confirm it's you first.", () =>
    api.post<{ backup_codes: string[] }>("/auth/2fa/backup-codes"));
  return backup_codes;
}

// ---- sessions and security events ------------------------------------------------------------------

export async function listSessions(): Promise<Session[]> {
  return (await api.get<{ sessions: Session[] }>("/auth/sessions")).sessions;
}

export async function revokeSession(id: string): Promise<void> {
  await api.del(`/auth/sessions/${id}`);
}

/** Ends every session of the account, this one too: the client returns to sign-in. */
export async function signOutEverywhere(): Promise<void> {
  await api.post("/auth/logout-all");
  endSession();
}

export const EVENTS_PAGE = 25;

export async function securityEvents(before?: string): Promise<{ security_events: SecurityEvent[]; has_more: boolean }> {
  return api.get("/users/@me/security-events", { query: { before, limit: EVENTS_PAGE } });
}
