// Pure helpers of the user settings: security events and devices in words, the locale and time-zone
// choices, how a typed second factor is sent, and the password refusals. Kept free of the store so
// Vitest covers them (web/tests/user-settings.test.ts).

import type { ApiError } from "../../lib/api";

/** What each security event type (OpenAPI: listSecurityEvents; docs/accounts.md) means to the person. */
const EVENT_WORDS: Record<string, string> = {
  register: "Account created",
  "login.success": "Signed in",
  "login.failure": "Failed sign-in attempt",
  "login.locked": "Sign-in locked after repeated failures",
  "passkey.login": "Signed in with a passkey",
  "passkey.register": "Passkey added",
  "passkey.rename": "Passkey renamed",
  "passkey.revoke": "Passkey removed",
  "2fa.enable": "Two-factor authentication turned on",
  "2fa.disable": "Two-factor authentication turned off",
  "2fa.backup_codes_regenerate": "New backup codes generated",
  "2fa.backup_code_used": "A backup code was used",
  "2fa.reset": "Two-factor authentication reset by an administrator",
  "password.change": "Password changed",
  "password.reset": "Password reset by an administrator",
  "step_up.success": "Identity confirmed",
  "step_up.failure": "Failed identity confirmation",
  "session.revoke": "A device was signed out",
  logout_all: "Signed out everywhere",
};

const FAILURE_REASONS: Record<string, string> = {
  invalid_credentials: "wrong password",
  invalid_code: "wrong or reused code",
  "2fa_required": "second factor missing",
  banned: "account banned",
  passkey_failed: "passkey not accepted",
  passkey_uv_required: "passkey used without its PIN or biometric",
};

/** "Failed sign-in attempt (wrong password)"; an unknown type keeps its name so nothing is hidden. */
export function eventWords(type: string, data: Record<string, unknown> = {}): string {
  const base = EVENT_WORDS[type] ?? `Security event “${type}”`;
  const reason = typeof data.reason === "string" ? data.reason : null;
  if (reason && (type === "login.failure" || type === "step_up.failure")) {
    return `${base} (${FAILURE_REASONS[reason] ?? reason.replace(/_/g, " ")})`;
  }
  return base;
}

/** Events that deserve attention are marked in the list. */
export function isWarning(type: string): boolean {
  return type.endsWith(".failure") || type === "login.locked" || type === "2fa.disable" || type === "2fa.reset"
    || type === "password.reset";
}

/** "Firefox on Windows", "Chrome on Android", "Command line (curl)": the user agent in a few words. */
export function summariseAgent(ua: string | null | undefined): string {
  if (!ua || !ua.trim()) return "Unknown device";
  const s = ua.trim();
  let browser: string | null = null;
  if (/Edg(e|A|iOS)?\//.test(s)) browser = "Edge";
  else if (/OPR\/|Opera/.test(s)) browser = "Opera";
  else if (/Firefox\/|FxiOS\//.test(s)) browser = "Firefox";
  else if (/HeadlessChrome\//.test(s)) browser = "Chrome (headless)";
  else if (/Chrome\/|CriOS\/|Chromium\//.test(s)) browser = "Chrome";
  else if (/Safari\//.test(s) && /Version\//.test(s)) browser = "Safari";
  let os: string | null = null;
  if (/Android/.test(s)) os = "Android";
  else if (/iPhone|iPad|iPod/.test(s)) os = "iOS";
  else if (/CrOS/.test(s)) os = "ChromeOS";
  else if (/Windows/.test(s)) os = "Windows";
  else if (/Mac OS X|Macintosh/.test(s)) os = "macOS";
  else if (/Linux|X11/.test(s)) os = "Linux";
  if (browser) return os ? `${browser} on ${os}` : browser;
  if (os) return `A browser on ${os}`;
  // Programs name themselves first: "curl/8.5", "python-httpx/0.27", "meadhall-cli/1.0".
  const first = s.split(/[\s;(]/)[0].split("/")[0];
  return first ? `Program (${first.slice(0, 40)})` : "Unknown device";
}

/** How a session was started, in words. */
export function methodWords(method: string): string {
  return method === "password" ? "Password" : method === "passkey" ? "Passkey" : method === "cli" ? "Command line" : method;
}

/** "just now", "5 minutes ago", "3 hours ago", "2 days ago"; the full date goes in a title. */
export function ago(iso: string, now: number = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return "just now";
  const units: [number, string][] = [[60 * 60 * 24 * 365, "year"], [60 * 60 * 24 * 30, "month"], [60 * 60 * 24, "day"],
    [60 * 60, "hour"], [60, "minute"]];
  for (const [size, name] of units) {
    if (seconds >= size) {
      const n = Math.floor(seconds / size);
      return `${n} ${name}${n === 1 ? "" : "s"} ago`;
    }
  }
  return "just now";
}

export function fullDate(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/** A code typed for a second factor: six digits are a TOTP code, anything else a backup code. */
export function codeBody(typed: string): { totp_code: string } | { backup_code: string } | null {
  const c = typed.replace(/\s+/g, "");
  if (!c) return null;
  return /^\d{6}$/.test(c) ? { totp_code: c } : { backup_code: c };
}

// ---- locales and time zones ------------------------------------------------------------------------

/** The shape the service accepts for a locale (BCP 47, at most 16 characters). */
export const LOCALE_PATTERN = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

const COMMON_LOCALES = [
  "en", "en-GB", "en-US", "de", "fr", "es", "es-419", "it", "pt", "pt-BR", "nl", "sv", "nb", "da", "fi", "is",
  "pl", "cs", "uk", "ru", "tr", "el", "he", "ar", "fa", "hi", "ja", "ko", "zh-CN", "zh-TW", "id", "vi", "th",
];

/** The locale choices, each with its name in English and in itself ("German — Deutsch"), the current
 * value kept first when it is not among them. */
export function localeChoices(current?: string | null): { tag: string; label: string }[] {
  const tags = [...COMMON_LOCALES];
  if (current && !tags.includes(current)) tags.unshift(current);
  return tags.map((tag) => ({ tag, label: localeLabel(tag) }));
}

export function localeLabel(tag: string): string {
  try {
    const english = new Intl.DisplayNames(["en"], { type: "language" }).of(tag);
    const own = new Intl.DisplayNames([tag], { type: "language" }).of(tag);
    if (english && own && english !== own) return `${english} — ${own}`;
    if (english) return english;
  } catch {
    // An odd tag: shown as it is.
  }
  return tag;
}

/** The IANA zones this browser knows (the service checks against its own tzdata). */
export function timeZones(): string[] {
  const intl = Intl as unknown as { supportedValuesOf?: (key: string) => string[] };
  let zones: string[] = [];
  try {
    zones = intl.supportedValuesOf?.("timeZone") ?? [];
  } catch {
    zones = [];
  }
  if (!zones.includes("UTC")) zones = [...zones, "UTC"];
  return zones;
}

export function browserZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch {
    return "UTC";
  }
}

/** The time now in a zone ("14:05"), or null for a zone this browser does not know. */
export function timeIn(zone: string, now: Date = new Date()): string | null {
  try {
    return new Intl.DateTimeFormat(undefined, { timeZone: zone, hour: "2-digit", minute: "2-digit" }).format(now);
  } catch {
    return null;
  }
}

// ---- passwords ---------------------------------------------------------------------------------------

export const PASSWORD_MIN = 10;

/** The service's refusal of a new password in words. */
export function passwordRefusal(err: ApiError): string {
  const detail = err.details.find((d) => d.field === "new_password" || d.field === "password")?.message ?? "";
  if (/too short/.test(detail)) return `The new password is too short: use at least ${PASSWORD_MIN} characters.`;
  if (/too common/.test(detail)) return "The new password is too common: it appears in lists of leaked passwords. Choose another.";
  if (/too long/.test(detail)) return "The new password is too long: use at most 256 characters.";
  return err.message;
}

/** The fields of a failed profile save, each with its reason (validation details of the service). */
export function fieldErrors(err: ApiError): Record<string, string> {
  const out: Record<string, string> = {};
  for (const d of err.details) {
    const field = d.field.split(".").pop() ?? d.field;
    if (!out[field]) out[field] = d.message;
  }
  return out;
}
