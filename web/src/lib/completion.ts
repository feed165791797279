// What the composer completes while one types (docs/client.md, "Composer"): `@` people, `#` rooms,
// `:` emojis and `/` commands at the start of a message. The textbox shows readable words (`@freya`,
// `#general`, `:wave:`); the picks are remembered as references and become the service's tokens
// (`<@id>`, `<#id>`, `<:name:id>`) when the message is sent.

import { t } from "../i18n/index.svelte";

export type Trigger = "@" | "#" | ":" | "/";

export interface Active {
  trigger: Trigger;
  /** What was typed after the trigger. */
  query: string;
  /** Where the trigger character is. */
  start: number;
  /** Where the completed word ends (the caret). */
  end: number;
}

// A trigger starts a word: at the start of the text or after a space or an opening bracket.
const WORD = /(^|[\s([{"'])([@#:])([^\s@#:<>]*)$/u;
const COMMAND = /^\/([a-z]*)$/;
/** `:` completes only after two characters, so "10:30" or ":)" never open the list. */
const EMOJI_QUERY = /^[\p{L}\p{N}_+-]{2,}$/u;

/** The word being completed when the caret is at `caret`, or null. */
export function activeCompletion(text: string, caret: number): Active | null {
  const before = text.slice(0, caret);
  const command = COMMAND.exec(before);
  if (command) return { trigger: "/", query: command[1], start: 0, end: caret };
  const m = WORD.exec(before);
  if (!m) return null;
  const trigger = m[2] as Trigger;
  const query = m[3];
  if (trigger === ":" && !EMOJI_QUERY.test(query)) return null;
  if (trigger === "#" && !/^[\p{L}\p{N}_-]*$/u.test(query)) return null;
  return { trigger, query, start: caret - query.length - 1, end: caret };
}

/** The text with the completed word replaced by `insertion` and one space, and the caret after it. */
export function applyCompletion(text: string, active: Active, insertion: string): { text: string; caret: number } {
  const rest = text.slice(active.end);
  const spaced = rest.startsWith(" ") ? insertion : `${insertion} `;
  const head = text.slice(0, active.start) + spaced;
  return { text: head + rest, caret: head.length + (rest.startsWith(" ") ? 1 : 0) };
}

/** A readable word in the textbox that stands for a token of the interface. */
export interface Reference {
  shown: string;
  token: string;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The content to send: each remembered reference, where it still stands as a whole word, becomes its
 * token. Longer words go first so `@thorin` is never read as `@thor` + `in`. Code stays as typed. */
export function encodeReferences(text: string, refs: Reference[]): string {
  const unique = new Map<string, string>();
  for (const r of refs) unique.set(r.shown, r.token);
  const shown = [...unique.keys()].sort((a, b) => b.length - a.length);
  if (!shown.length) return text;
  const word = new RegExp(`(${shown.map(escapeRegExp).join("|")})(?![\\p{L}\\p{N}_])`, "gu");
  // Inline code and code blocks are left alone.
  return text
    .split(/(```[\s\S]*?```|`[^`\n]+`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(word, (w) => unique.get(w) ?? w)))
    .join("");
}

export interface Command {
  name: string;
  usage: string;
  readonly description: string;
}

/** The commands the service reads at the start of a message, each with one line saying what it does. */
export const COMMANDS: Command[] = [
  { name: "me", usage: "/me <action>", get description() { return t("shell.command.me"); } },
  { name: "whisper", usage: "/whisper <text>", get description() { return t("shell.command.whisper"); } },
  { name: "scream", usage: "/scream <text>", get description() { return t("shell.command.scream"); } },
  { name: "ls", usage: "/ls @person <text>", get description() { return t("shell.command.ls"); } },
];

export function matchCommands(query: string): Command[] {
  const q = query.toLowerCase();
  return COMMANDS.filter((c) => c.name.startsWith(q));
}

/** Rank by how well any of the names matches: equal, then prefix, then a word's prefix, then inside. */
export function rank<T>(items: T[], query: string, names: (item: T) => string[], limit = 8): T[] {
  const q = query.toLowerCase();
  if (!q) return items.slice(0, limit);
  const scored: { item: T; score: number; length: number; i: number }[] = [];
  items.forEach((item, i) => {
    let best = 0;
    let length = Infinity;
    for (const raw of names(item)) {
      const name = raw.toLowerCase();
      let score = 0;
      if (name === q) score = 4;
      else if (name.startsWith(q)) score = 3;
      else if (name.split(/[\s_-]+/).some((w) => w.startsWith(q))) score = 2;
      else if (name.includes(q)) score = 1;
      if (score > best || (score === best && score && name.length < length)) {
        best = score;
        length = name.length;
      }
    }
    if (best) scored.push({ item, score: best, length, i });
  });
  // Among equal matches the shorter name is the closer one (`:sm` → smile before smiley).
  scored.sort((a, b) => b.score - a.score || a.length - b.length || a.i - b.i);
  return scored.slice(0, limit).map((s) => s.item);
}

/** The readable text of a saved draft: tokens become words again, with the references to send them. */
export function decodeReferences(content: string, names: { user: (id: string) => string | null; room: (id: string) => string | null }):
  { text: string; refs: Reference[] } {
  const refs: Reference[] = [];
  const parts = content.split(/(```[\s\S]*?```|`[^`\n]+`)/);
  const text = parts
    .map((part, i) =>
      i % 2 === 1
        ? part
        : part.replace(/<@!?(\d{1,20})>|<#(\d{1,20})>|<a?:([A-Za-z0-9_]{2,32}):(\d{1,20})>/g, (token, user, room, emoji) => {
            const name = user ? names.user(user) : room ? names.room(room) : emoji;
            if (!name) return token;
            const shown = user ? `@${name}` : room ? `#${name}` : `:${name}:`;
            refs.push({ shown, token });
            return shown;
          }),
    )
    .join("");
  return { text, refs };
}

/** The most characters a message may have (the service's `message_length`, counted in Unicode code points
 * of the content as sent, tokens included). */
export const MESSAGE_LENGTH = 4000;

/** The counter shows from this many characters on. */
export const COUNTER_FROM = 3500;

/** The length the service counts: code points, not UTF-16 units. */
export function lengthOf(content: string): number {
  let n = 0;
  for (const _ of content) n++;
  return n;
}

/** Someone who may be mentioned, by every name the completion would show for them. */
export interface Mentionable {
  id: string;
  names: string[];
}

/** The `@name` words typed without the completion that name exactly one person (by display name, nickname
 * or username, in any case), as references to send as mentions. A name two people share stays text. Longer
 * names win (`@Thor Odinson` over `@Thor`); code is left alone. */
export function typedMentions(text: string, people: Mentionable[]): Reference[] {
  const owners = new Map<string, Set<string>>();
  for (const p of people) {
    for (const name of p.names) {
      const key = name.trim().toLowerCase();
      if (!key) continue;
      if (!owners.has(key)) owners.set(key, new Set());
      owners.get(key)!.add(p.id);
    }
  }
  const keys = [...owners.keys()].sort((a, b) => b.length - a.length);
  const refs: Reference[] = [];
  const parts = text.split(/(```[\s\S]*?```|`[^`\n]+`)/);
  for (let i = 0; i < parts.length; i += 2) {
    const part = parts[i];
    for (const m of part.matchAll(/(^|[\s([{"'])@/g)) {
      const at = (m.index ?? 0) + m[1].length + 1;
      const rest = part.slice(at).toLowerCase();
      const key = keys.find((k) => rest.startsWith(k) && !/[\p{L}\p{N}_]/u.test(rest.charAt(k.length)));
      const ids = key ? owners.get(key)! : null;
      if (!key || !ids || ids.size !== 1) continue;
      refs.push({ shown: part.slice(at - 1, at + key.length), token: `<@${[...ids][0]}>` });
    }
  }
  return refs;
}
