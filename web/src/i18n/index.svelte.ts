// The client's words in the reader's language (docs/client.md, "Languages"). Every user-visible string is a
// key of the message catalogues in src/i18n/<language>/<area>.json, written in ICU MessageFormat
// ("{count, plural, one {# сообщение} few {# сообщения} many {# сообщений} other {# сообщения}}") and
// formatted by FormatJS's intl-messageformat, which follows each language's CLDR plural rules. English is
// the reference catalogue; the type of its keys (keys.ts) is the only thing `t()` accepts.
//
// A language's catalogue is two chunks loaded on demand: the words of the first frame (`<language>.ts`,
// fetched before the client mounts) and those of the settings, server settings and administration
// (`<language>-screens.ts`, fetched right after, and awaited by those screens). The first download carries
// no words, and a reader of one language never downloads the other's.

import { IntlMessageFormat } from "intl-messageformat";
import type { Key } from "./keys";

export type { Key };

export type Language = "en" | "ru";

/** The languages the client speaks, each named in itself (the `Language` choice of user settings). */
export const LANGUAGES: readonly { tag: Language; name: string }[] = [
  { tag: "en", name: "English" },
  { tag: "ru", name: "Русский" },
];

export type Values = Record<string, string | number | Date | null | undefined>;

type Chunk = Promise<{ default: Record<string, Record<string, string>> }>;
type Half = "first" | "screens";

const loaders: Record<Language, Record<Half, () => Chunk>> = {
  en: { first: () => import("./en/en"), screens: () => import("./en/en-screens") },
  ru: { first: () => import("./ru/ru"), screens: () => import("./ru/ru-screens") },
};

/** The language shown and the time zone dates are shown in; screens re-render when either changes. */
export const i18n = $state({
  language: "en" as Language,
  timeZone: browserZone(),
  /** Counts the chunks arrived: words that came after a screen rendered re-render it. */
  revision: 0,
});

const catalogues: Partial<Record<Language, Map<string, string>>> = {};
const arriving = new Map<string, Promise<void>>();

/** Loads one part of a language's catalogue into its map (once). */
function loadPart(language: Language, part: Half): Promise<void> {
  const id = `${language}/${part}`;
  let loading = arriving.get(id);
  if (!loading) {
    loading = loaders[language][part]().then(({ default: areas }) => {
      const flat = (catalogues[language] ??= new Map<string, string>());
      for (const [area, messages] of Object.entries(areas)) {
        for (const [key, text] of Object.entries(messages)) flat.set(`${area}.${key}`, text);
      }
      i18n.revision += 1;
    });
    // A chunk that failed to arrive (offline before it was ever cached) is asked for again next time.
    loading.catch(() => arriving.delete(id));
    arriving.set(id, loading);
  }
  return loading;
}

/** Resolves once the words of the on-demand screens (settings, server settings, administration) of the
 * shown language are here; those screens wait for it before they show. */
export function screenWords(): Promise<void> {
  return loadPart(i18n.language, "screens");
}
const compiled = new Map<string, IntlMessageFormat>();
const STORAGE_KEY = "meadhall.language";
/** Whether an account's locale decides the language now (set by followAccount). */
let followed = false;

/** "ru", "ru-RU", "RU" → "ru"; anything the client does not speak → null. */
export function supported(tag: string | null | undefined): Language | null {
  const primary = (tag ?? "").trim().toLowerCase().split(/[-_]/)[0];
  return LANGUAGES.some((l) => l.tag === primary) ? (primary as Language) : null;
}

/** The account's locale when the client speaks it, else the first of the browser's languages it speaks,
 * else English (CLIENT.md, "Languages and the installable app"). */
export function pickLanguage(locale: string | null | undefined, browser: readonly string[] = browserLanguages()): Language {
  const own = supported(locale);
  if (own) return own;
  for (const tag of browser) {
    const found = supported(tag);
    if (found) return found;
  }
  return "en";
}

export function browserLanguages(): readonly string[] {
  if (typeof navigator === "undefined") return [];
  return navigator.languages?.length ? navigator.languages : [navigator.language].filter(Boolean);
}

export function browserZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch {
    return "UTC";
  }
}

/** The browser's preferred tag as an account locale ("ru-RU"), sent at registration. */
export function browserLocale(): string {
  const tag = browserLanguages()[0] ?? "en";
  return /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/.test(tag) && tag.length <= 16 ? tag : "en";
}

/** Loads a language's catalogue (once) and shows it. */
export async function setLanguage(language: Language): Promise<void> {
  await loadPart(language, "first");
  // A switch made on a settings screen shows that screen in the new language at once.
  if (arriving.has(`${i18n.language}/screens`)) await loadPart(language, "screens");
  else void loadPart(language, "screens").catch(() => undefined);
  i18n.language = language;
  if (typeof document !== "undefined") document.documentElement.lang = language;
  try {
    localStorage.setItem(STORAGE_KEY, language);
  } catch {
    // Private mode: the next visit asks the browser again.
  }
}

/** The language of the last visit (the account's, kept for the first frame before the account is known). */
export function rememberedLanguage(): string | null {
  try {
    return localStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

/** Follows the signed-in account: its locale picks the language, its time zone the clock. */
export async function followAccount(user: { locale?: string | null; timezone?: string | null } | null): Promise<void> {
  if (!user) {
    // Signed out: the next person at this browser meets the browser's language and clock, not the last
    // account's.
    if (!followed) return;
    followed = false;
    i18n.timeZone = browserZone();
    try {
      localStorage.removeItem(STORAGE_KEY);
    } catch {
      // Nothing was kept.
    }
    await setLanguage(pickLanguage(null));
    return;
  }
  followed = true;
  i18n.timeZone = validZone(user.timezone) ?? browserZone();
  const language = pickLanguage(user.locale);
  if (language !== i18n.language || !arriving.has(`${language}/first`)) await setLanguage(language);
}

function validZone(zone: string | null | undefined): string | null {
  if (!zone) return null;
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return zone;
  } catch {
    return null;
  }
}

/** Whether the shown language has this key (for keys made from a value, such as an error code). */
export function has(key: string): boolean {
  return catalogues[i18n.language]?.has(key) ?? false;
}

function format(key: string, values?: Record<string, unknown>): unknown {
  const language = i18n.language;
  void i18n.revision; // read, so a screen shown before its words arrived renders again when they do
  const text = catalogues[language]?.get(key) ?? catalogues.en?.get(key);
  if (text === undefined) return key; // a missing key shows itself; tests/i18n.test.ts keeps there being none
  const id = `${language}\u0000${key}`;
  let message = compiled.get(id);
  if (!message) {
    message = new IntlMessageFormat(text, language, undefined, { ignoreTag: false });
    compiled.set(id, message);
  }
  try {
    return message.format(values as never);
  } catch {
    return text;
  }
}

/** The message of `key` in the shown language, its `{placeholders}` filled from `values`. */
export function t(key: Key, values?: Values): string {
  const out = format(key, values);
  return Array.isArray(out) ? out.join("") : String(out);
}

/** `t` for a key made at run time (`errors.${code}`): null when the catalogue has no such key. */
export function tMaybe(key: string, values?: Values): string | null {
  return has(key) ? t(key as Key, values) : null;
}

export interface Part {
  /** The tag around this text (`<link>…</link>` in the message gives "link"), null for plain text. */
  tag: string | null;
  text: string;
}

/** A message with tags (`"Read the <link>guide</link>"`) as parts, for a screen that renders the tagged
 * words as an element (a link, bold) without any HTML in the catalogue. One level of tags. */
export function tParts(key: Key, values?: Values, tags: readonly string[] = ["link", "b"]): Part[] {
  const rich: Record<string, unknown> = { ...values };
  for (const tag of tags) rich[tag] = (chunks: unknown[]) => ({ tag, text: chunks.join("") });
  const out = format(key, rich);
  const list = Array.isArray(out) ? out : [out];
  return list.map((p) => (typeof p === "object" && p !== null && "tag" in p ? (p as Part) : { tag: null, text: String(p) }));
}
