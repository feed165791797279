// The calls of the user settings (OpenAPI: updateMe, setAvatar, removeAvatar, completeOnboarding,
// changePassword, setupTwoFactor, enableTwoFactor, disableTwoFactor, regenerateBackupCodes, listSessions,
// revokeSession, logoutAll, listSecurityEvents). Each answer that carries the user is applied as its
// USER_UPDATE would be, so every screen shows the change at once.

import { t } from "../../i18n/index.svelte";
import { api, call, type CallBody } from "../../lib/api";
import { applyEvent } from "../../lib/state";
import { withStepUp } from "../../lib/stepup.svelte";
import { endSession, store } from "../../lib/store.svelte";
import type { SecurityEvent, Session, User } from "../../lib/types";

function applied(user: User): User {
  applyEvent(store, "USER_UPDATE", user);
  return user;
}

/** What a profile save may change (OpenAPI: updateMe). */
export type ProfileChanges = CallBody<"updateMe">;

export async function saveProfile(changes: ProfileChanges): Promise<User> {
  const { user } = await call("updateMe", { body: changes });
  return applied(user);
}

export async function completeOnboarding(body: { display_name: string; bio?: string; locale?: string }): Promise<User> {
  const { user } = await call("completeOnboarding", { body });
  return applied(user);
}

/** The cropped avatar as a multipart `file` (the same way a group icon is sent). */
export async function uploadAvatar(blob: Blob, name: string): Promise<User> {
  const { user } = await api.upload<{ user: User }>("/users/@me/avatar", blob, { name, retries: 0, reword: (envelope) => {
    if (envelope.code === "file.unsupported_type") return { ...envelope, message: t("settings.account.avatarType") };
    if (envelope.code === "file.too_large") return { ...envelope, message: t("settings.account.avatarTooLarge", { detail: envelope.message ?? "" }).trim() };
    return envelope;
  } });
  return applied(user);
}

export async function removeAvatar(): Promise<User> {
  const { user } = await call("removeAvatar");
  return applied(user);
}

// ---- password and two-factor authentication ----------------------------------------------------------

export async function changePassword(newPassword: string): Promise<void> {
  await withStepUp(t("settings.account.stepUpPassword"), () =>
    call("changePassword", { body: { new_password: newPassword } }));
  // The change clears a temporary password's flag (the answer is empty): the prompt to change it goes.
  if (store.me) store.me.password_reset_required = false;
}

export interface TwoFactorSetup {
  secret: string;
  otpauth_url: string;
  qr_png: string;
}

export async function setupTwoFactor(): Promise<TwoFactorSetup> {
  return call("setupTwoFactor");
}

export async function enableTwoFactor(code: string): Promise<string[]> {
  const { user, backup_codes } = await call("enableTwoFactor", { body: {
    totp_code: code.replace(/\s+/g, ""),
  } });
  applied(user);
  return backup_codes;
}

export async function disableTwoFactor(body: { totp_code: string } | { backup_code: string }): Promise<void> {
  const { user } = await withStepUp(t("settings.account.stepUpDisable2fa"), () =>
    call("disableTwoFactor", { body }));
  applied(user);
}

export async function regenerateBackupCodes(): Promise<string[]> {
  const { backup_codes } = await withStepUp(t("settings.account.stepUpBackupCodes"), () =>
    call("regenerateBackupCodes"));
  return backup_codes;
}

// ---- sessions and security events ------------------------------------------------------------------

export async function listSessions(): Promise<Session[]> {
  return (await call("listSessions")).sessions;
}

export async function revokeSession(id: string): Promise<void> {
  await call("revokeSession", { path: { session_id: id } });
}

/** Ends every session of the account, this one too: the client returns to sign-in. */
export async function signOutEverywhere(): Promise<void> {
  await call("logoutAll");
  endSession();
}

export const EVENTS_PAGE = 25;

export async function securityEvents(before?: string): Promise<{ security_events: SecurityEvent[]; has_more: boolean }> {
  return call("listSecurityEvents", { query: { before, limit: EVENTS_PAGE } });
}
