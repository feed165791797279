// The Unicode emoji list of the picker and of `:shortcode:` completion, made at build time from the
// npm package emojibase-data (CLDR names, GitHub-style shortcodes). It is served as a module of its
// own (`virtual:emoji-data`) that the client imports lazily, so the initial bundle does not carry it.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Plugin } from "vite";

const ID = "virtual:emoji-data";
const RESOLVED = `\0${ID}`;
const COMPONENT_GROUP = 2; // skin tones and hair styles on their own are not emojis to pick

interface Compact {
  unicode: string;
  label: string;
  hexcode: string;
  group?: number;
  order?: number;
}

/** The fully-qualified form, as people type and as other clients react: a variation selector only after
 * a character that is not shown as an emoji by default (❤️ keeps it, 👍 has none). */
export function qualified(unicode: string): string {
  return unicode.replace(/(\p{Emoji_Presentation})\uFE0F/gu, "$1");
}

/** `[emoji, name, shortcodes, group]` rows in the Unicode order, and the group names. */
export function emojiModule(): string {
  const require = createRequire(import.meta.url);
  const read = (name: string) => JSON.parse(readFileSync(require.resolve(name), "utf-8"));
  const compact: Compact[] = read("emojibase-data/en/compact.json");
  const github: Record<string, string | string[]> = read("emojibase-data/en/shortcodes/github.json");
  const messages: { groups: { message: string; order: number }[] } = read("emojibase-data/en/messages.json");
  const rows = compact
    .filter((e) => e.group !== undefined && e.group !== COMPONENT_GROUP && e.order !== undefined)
    .sort((a, b) => (a.order ?? 0) - (b.order ?? 0))
    .map((e) => {
      const codes = github[e.hexcode] ?? [];
      return [qualified(e.unicode), e.label, Array.isArray(codes) ? codes : [codes], e.group];
    });
  const groups = messages.groups.sort((a, b) => a.order - b.order).map((g) => g.message);
  return `export const groups = ${JSON.stringify(groups)};\nexport const emojis = ${JSON.stringify(rows)};\n`;
}

export function emojiData(): Plugin {
  return {
    name: "meadhall-emoji-data",
    resolveId: (id) => (id === ID ? RESOLVED : null),
    load: (id) => (id === RESOLVED ? emojiModule() : null),
  };
}
