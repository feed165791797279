// Pure helpers of the user settings: security events and devices in words, the language and time-zone
// choices, how a typed second factor is sent, and the password refusals. Kept free of the store so
// Vitest covers them (web/tests/user-settings.test.ts).

import { formatDate } from "../../i18n/format";
import { i18n, LANGUAGES, supported, t, type Key } from "../../i18n/index.svelte";
import type { ApiError } from "../../lib/api";

/** What each security event type (OpenAPI: listSecurityEvents; docs/accounts.md) means to the person. */
const EVENT_WORDS: Record<string, Key> = {
  register: "settings.event.register",
  "login.success": "settings.event.loginSuccess",
  "login.failure": "settings.event.loginFailure",
  "login.locked": "settings.event.loginLocked",
  "passkey.login": "settings.event.passkeyLogin",
  "passkey.register": "settings.event.passkeyRegister",
  "passkey.rename": "settings.event.passkeyRename",
  "passkey.revoke": "settings.event.passkeyRevoke",
  "2fa.enable": "settings.event.twoFactorEnable",
  "2fa.disable": "settings.event.twoFactorDisable",
  "2fa.backup_codes_regenerate": "settings.event.backupCodesRegenerate",
  "2fa.backup_code_used": "settings.event.backupCodeUsed",
  "2fa.reset": "settings.event.twoFactorReset",
  "password.change": "settings.event.passwordChange",
  "password.reset": "settings.event.passwordReset",
  "step_up.success": "settings.event.stepUpSuccess",
  "step_up.failure": "settings.event.stepUpFailure",
  "session.revoke": "settings.event.sessionRevoke",
  logout_all: "settings.event.logoutAll",
};

const FAILURE_REASONS: Record<string, Key> = {
  invalid_credentials: "settings.event.reason.invalidCredentials",
  invalid_code: "settings.event.reason.invalidCode",
  "2fa_required": "settings.event.reason.twoFactorRequired",
  banned: "settings.event.reason.banned",
  passkey_failed: "settings.event.reason.passkeyFailed",
  passkey_uv_required: "settings.event.reason.passkeyUvRequired",
};

/** "Failed sign-in attempt (wrong password)"; an unknown type keeps its name so nothing is hidden. */
export function eventWords(type: string, data: Record<string, unknown> = {}): string {
  const known = EVENT_WORDS[type];
  const base = known ? t(known) : t("settings.event.unknown", { type });
  const reason = typeof data.reason === "string" ? data.reason : null;
  if (reason && (type === "login.failure" || type === "step_up.failure")) {
    const why = FAILURE_REASONS[reason];
    return t("settings.event.withReason", { event: base, reason: why ? t(why) : reason.replace(/_/g, " ") });
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
  if (!ua || !ua.trim()) return t("settings.agent.unknown");
  const s = ua.trim();
  // Browser and system names are product names, the same in every language.
  let browser: string | null = null;
  if (/Edg(e|A|iOS)?\//.test(s)) browser = "Edge"; // i18n-ignore: product name
  else if (/OPR\/|Opera/.test(s)) browser = "Opera"; // i18n-ignore: product name
  else if (/Firefox\/|FxiOS\//.test(s)) browser = "Firefox"; // i18n-ignore: product name
  else if (/HeadlessChrome\//.test(s)) browser = t("settings.agent.headlessChrome");
  else if (/Chrome\/|CriOS\/|Chromium\//.test(s)) browser = "Chrome"; // i18n-ignore: product name
  else if (/Safari\//.test(s) && /Version\//.test(s)) browser = "Safari"; // i18n-ignore: product name
  let os: string | null = null;
  if (/Android/.test(s)) os = "Android"; // i18n-ignore: product name
  else if (/iPhone|iPad|iPod/.test(s)) os = "iOS"; // i18n-ignore: product name
  else if (/CrOS/.test(s)) os = "ChromeOS"; // i18n-ignore: product name
  else if (/Windows/.test(s)) os = "Windows"; // i18n-ignore: product name
  else if (/Mac OS X|Macintosh/.test(s)) os = "macOS"; // i18n-ignore: product name
  else if (/Linux|X11/.test(s)) os = "Linux"; // i18n-ignore: product name
  if (browser) return os ? t("settings.agent.browserOn", { browser, os }) : browser;
  if (os) return t("settings.agent.someBrowserOn", { os });
  // Programs name themselves first: "curl/8.5", "python-httpx/0.27", "meadhall-cli/1.0".
  const first = s.split(/[\s;(]/)[0].split("/")[0];
  return first ? t("settings.agent.program", { name: first.slice(0, 40) }) : t("settings.agent.unknown");
}

/** How a session was started, in words. */
export function methodWords(method: string): string {
  return method === "password" ? t("settings.method.password") : method === "passkey" ? t("settings.method.passkey")
    : method === "cli" ? t("settings.method.cli") : method;
}

/** "just now", "5 minutes ago", "3 hours ago", "2 days ago"; the full date goes in a title. */
export function ago(iso: string, now: number = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return t("settings.ago.now");
  const units: [number, Key][] = [[60 * 60 * 24 * 365, "settings.ago.years"], [60 * 60 * 24 * 30, "settings.ago.months"],
    [60 * 60 * 24, "settings.ago.days"], [60 * 60, "settings.ago.hours"], [60, "settings.ago.minutes"]];
  for (const [size, key] of units) {
    if (seconds >= size) return t(key, { count: Math.floor(seconds / size) });
  }
  return t("settings.ago.now");
}

/** A moment in full ("6 Dec 2026, 14:05"), in the shown language and the account's time zone. */
export function fullDate(iso: string): string {
  return formatDate(iso, "moment");
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

/** The language choices of the profile: the languages the client speaks, each named in itself; an account
 * locale of another tag ("de", "ru-RU") is kept as a choice, named in English and in itself, so nothing is
 * lost by opening the settings (the client shows such an account in the language `pickLanguage` gives). */
export function languageChoices(current?: string | null): { tag: string; label: string }[] {
  const choices: { tag: string; label: string }[] = LANGUAGES.map((l) => ({ tag: l.tag, label: l.name }));
  if (current && !supported(current)) choices.push({ tag: current, label: localeLabel(current) });
  return choices;
}

/** The choice that stands for an account's locale: "ru-RU" (what registration sends from a Russian
 * browser) is the language Русский, not a second entry beside it. */
export function languageChoice(locale?: string | null): string {
  return supported(locale) ?? (locale || "en");
}

/** "German — Deutsch": a locale named in English and in itself (an odd tag is shown as it is). */
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

/** The time now in a zone ("14:05", in the shown language), or null for a zone this browser does not know. */
export function timeIn(zone: string, now: Date = new Date()): string | null {
  try {
    return new Intl.DateTimeFormat(i18n.language, { timeZone: zone, hour: "2-digit", minute: "2-digit" }).format(now);
  } catch {
    return null;
  }
}

// ---- passwords ---------------------------------------------------------------------------------------

export const PASSWORD_MIN = 10;

/** The service's refusal of a new password in words. */
export function passwordRefusal(err: ApiError): string {
  const detail = err.details.find((d) => d.field === "new_password" || d.field === "password")?.message ?? "";
  if (/too short/.test(detail)) return t("settings.password.tooShort", { count: PASSWORD_MIN });
  if (/too common/.test(detail)) return t("settings.password.tooCommon");
  if (/too long/.test(detail)) return t("settings.password.tooLong", { count: 256 });
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
