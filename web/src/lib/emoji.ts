// Emojis for the picker and for `:shortcode:` completion: the Unicode list made at build time
// (web/plugins/emoji-data.ts), loaded the first time it is needed, and the guilds' custom emojis from
// READY (each `<:name:id>` with its image under /files/).

import { rank } from "./completion";
import type { Emoji } from "./types";

export interface UnicodeEmoji {
  emoji: string;
  name: string;
  shortcodes: string[];
  group: number;
}

export interface EmojiSet {
  groups: string[];
  emojis: UnicodeEmoji[];
}

let loading: Promise<EmojiSet> | null = null;
let loaded: EmojiSet | null = null;

/** The Unicode emojis, fetched once as their own module. */
export function loadEmojis(): Promise<EmojiSet> {
  loading ??= import("virtual:emoji-data").then((m) => {
    loaded = { groups: m.groups, emojis: m.emojis.map(([emoji, name, shortcodes, group]) => ({ emoji, name, shortcodes, group })) };
    return loaded;
  });
  return loading;
}

/** The list when it has been loaded already (completion asks synchronously while one types). */
export function loadedEmojis(): EmojiSet | null {
  return loaded;
}

/** Emojis whose shortcode or name matches, best first. */
export function searchEmojis(emojis: UnicodeEmoji[], query: string, limit = 8): UnicodeEmoji[] {
  return rank(emojis, query.replace(/^:|:$/g, ""), (e) => [...e.shortcodes, e.name], limit);
}

export function searchCustom(custom: Emoji[], query: string, limit = 8): Emoji[] {
  return rank(custom, query.replace(/^:|:$/g, ""), (e) => [e.name], limit);
}

/** The interface's token for a custom emoji. */
export function customToken(e: Emoji): string {
  return e.token ?? `<:${e.name}:${e.id}>`;
}

/** Where a custom emoji's image is served. */
export function customUrl(e: Emoji): string {
  return `/files/${e.file_id ?? e.id}`;
}

/** The shortcode shown for a Unicode emoji (`:thumbsup:`), the one that best fits what was typed; else
 * its name. */
export function shortcodeOf(e: UnicodeEmoji, query = ""): string {
  const q = query.toLowerCase();
  const fit = (q && e.shortcodes.find((c) => c.startsWith(q))) || (q && e.shortcodes.find((c) => c.includes(q)));
  const code = fit || e.shortcodes.find((c) => /^[a-z]/.test(c)) || e.shortcodes[0];
  return code ? `:${code}:` : e.name;
}
