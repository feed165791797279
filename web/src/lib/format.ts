// Message text into segments the screens render as elements (never as HTML), as Discord writes it
// (docs/client.md, "Markdown"). Blocks, read line by line: `# `, `## `, `### ` headings, `- `, `* ` and
// `1. ` lists, `> ` quoted lines and `>>> ` quoting to the end. Inline: mentions of users and rooms, custom
// emojis, links and masked links `[text](https://…)`, `code`, ```blocks``` (with their language),
// **bold**, *italic* or _italic_, __underline__, ~~strike~~ and ||spoilers||.

import { t } from "../i18n/index.svelte";
import { dayKey, formatDate } from "../i18n/format";

export type Segment =
  | { kind: "text"; text: string }
  | { kind: "bold" | "italic" | "strike" | "underline" | "spoiler"; children: Segment[] }
  | { kind: "code"; text: string }
  | { kind: "codeblock"; text: string; lang: string | null }
  | { kind: "link"; href: string; text: string; masked?: true }
  | { kind: "user"; id: string }
  | { kind: "room"; id: string }
  | { kind: "everyone" }
  | { kind: "emoji"; name: string; id: string }
  | { kind: "quote"; children: Segment[] }
  | { kind: "heading"; level: 1 | 2 | 3; children: Segment[] }
  | { kind: "list"; ordered: boolean; start: number; items: Segment[][] };

// An address may hold one level of parentheses (Wikipedia's); the last character is not punctuation
// that ends a sentence.
const URL_BODY = String.raw`https?:\/\/(?:[^\s<>()"]|\([^\s<>()"]*\))*(?:[^\s<>".,;:!?()\]']|\([^\s<>()"]*\))`;
const TOKEN = new RegExp(
  [
    "```(?:([A-Za-z0-9_+#.-]{0,20})\\n)?([\\s\\S]*?)```", // 1 lang, 2 code
    "`([^`\\n]+)`", // 3
    "<@!?(\\d{1,20})>", // 4
    "<#(\\d{1,20})>", // 5
    "<a?:([A-Za-z0-9_]{2,32}):(\\d{1,20})>", // 6, 7
    `\\[([^\\[\\]\\n]{1,256})\\]\\((${URL_BODY}|https?:\\/\\/[^\\s<>()"]+)\\)`, // 8 text, 9 href
    `(${URL_BODY})`, // 10
    "\\*\\*([\\s\\S]+?)\\*\\*", // 11
    "__([\\s\\S]+?)__", // 12
    "\\|\\|([\\s\\S]+?)\\|\\|", // 13
    "~~([\\s\\S]+?)~~", // 14
    "\\*([^*\\s][^*]*?)\\*", // 15
    "(?<![\\p{L}\\p{N}_])_([^_\\s](?:[^_]*?[^_\\s])?)_(?![\\p{L}\\p{N}_])", // 16
    "(@everyone)", // 17
  ].join("|"),
  "gu",
);

/** Masked text that is itself an address could send a reader elsewhere than it says: shown unmasked. */
const LOOKS_LIKE_ADDRESS = /(?:[a-z][a-z0-9+.-]*:\/\/|^\s*www\.)/i;

/** The inline segments of a run of text (no block syntax). */
export function parseInline(content: string): Segment[] {
  const out: Segment[] = [];
  let last = 0;
  for (const m of content.matchAll(TOKEN)) {
    const at = m.index ?? 0;
    if (at < last) continue;
    if (at > last) out.push({ kind: "text", text: content.slice(last, at) });
    last = at + m[0].length;
    if (m[2] !== undefined) {
      out.push({ kind: "codeblock", text: m[2], lang: m[1] ? m[1].toLowerCase() : null });
      // The block ends its line itself: a newline right after it would show as an empty line.
      if (content[last] === "\n") last += 1;
    } else if (m[3] !== undefined) out.push({ kind: "code", text: m[3] });
    else if (m[4] !== undefined) out.push({ kind: "user", id: m[4] });
    else if (m[5] !== undefined) out.push({ kind: "room", id: m[5] });
    else if (m[6] !== undefined) out.push({ kind: "emoji", name: m[6], id: m[7] });
    else if (m[8] !== undefined) {
      if (LOOKS_LIKE_ADDRESS.test(m[8]) || !m[8].trim()) out.push({ kind: "link", href: m[9], text: m[9] });
      else out.push({ kind: "link", href: m[9], text: m[8], masked: true });
    } else if (m[10] !== undefined) out.push({ kind: "link", href: m[10], text: m[10] });
    else if (m[11] !== undefined) out.push({ kind: "bold", children: parseInline(m[11]) });
    else if (m[12] !== undefined) out.push({ kind: "underline", children: parseInline(m[12]) });
    else if (m[13] !== undefined) out.push({ kind: "spoiler", children: parseInline(m[13]) });
    else if (m[14] !== undefined) out.push({ kind: "strike", children: parseInline(m[14]) });
    else if (m[15] !== undefined) out.push({ kind: "italic", children: parseInline(m[15]) });
    else if (m[16] !== undefined) out.push({ kind: "italic", children: parseInline(m[16]) });
    else if (m[17] !== undefined) out.push({ kind: "everyone" });
  }
  if (last < content.length) out.push({ kind: "text", text: content.slice(last) });
  return out;
}

const HEADING = /^(#{1,3}) +(\S.*)$/;
const LIST_ITEM = /^ *(?:([-*])|(\d{1,9})\.) +(\S.*)$/;
const QUOTE_LINE = /^> (.*)$|^>$/;
const QUOTE_REST = /^>>> ?(.*)$|^>>>$/;

function blocks(content: string, quoted: boolean): Segment[] {
  const lines = content.split("\n");
  const out: Segment[] = [];
  let text: string[] = [];
  // A run of ordinary lines; the line break before the next block is the block's own.
  const flush = () => {
    if (text.length) out.push(...parseInline(text.join("\n")));
    text = [];
  };
  // Inside an open ``` block every line is code, whatever it starts with.
  const fenceOpen = () => (text.join("\n").match(/```/g)?.length ?? 0) % 2 === 1;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (text.length && fenceOpen()) {
      text.push(line);
      continue;
    }
    const rest = quoted ? null : QUOTE_REST.exec(line);
    if (rest) {
      flush();
      out.push({ kind: "quote", children: blocks([rest[1] ?? "", ...lines.slice(i + 1)].join("\n"), true) });
      return out;
    }
    if (!quoted && QUOTE_LINE.test(line)) {
      flush();
      const quotedLines: string[] = [];
      for (; i < lines.length && QUOTE_LINE.test(lines[i]); i++) quotedLines.push(lines[i].slice(2));
      i -= 1;
      out.push({ kind: "quote", children: blocks(quotedLines.join("\n"), true) });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      flush();
      out.push({ kind: "heading", level: heading[1].length as 1 | 2 | 3, children: parseInline(heading[2]) });
      continue;
    }
    const item = LIST_ITEM.exec(line);
    if (item) {
      flush();
      const ordered = item[2] !== undefined;
      const items: Segment[][] = [];
      for (; i < lines.length; i++) {
        const next = LIST_ITEM.exec(lines[i]);
        if (!next || (next[2] !== undefined) !== ordered) break;
        items.push(parseInline(next[3]));
      }
      i -= 1;
      out.push({ kind: "list", ordered, start: ordered ? Number(item[2]) : 1, items });
      continue;
    }
    text.push(line);
  }
  flush();
  return out;
}

export function parse(content: string): Segment[] {
  return blocks(content, false);
}

/** The plain words of a message, for previews and accessible names. A spoiler stays hidden. */
export function plain(content: string, names: { user: (id: string) => string; room: (id: string) => string }): string {
  const walk = (segments: Segment[]): string =>
    segments
      .map((s) => {
        switch (s.kind) {
          case "text":
          case "code":
          case "codeblock":
            return s.text;
          case "link":
            return s.text;
          case "user":
            return `@${names.user(s.id)}`;
          case "room":
            return `#${names.room(s.id)}`;
          case "everyone":
            return "@everyone";
          case "emoji":
            return `:${s.name}:`;
          case "spoiler":
            return t("shell.format.spoiler");
          case "list":
            return s.items.map(walk).join(" · ");
          case "quote":
          case "heading":
            return `${walk(s.children)} `;
          default:
            return walk(s.children);
        }
      })
      .join("");
  return walk(parse(content)).trim();
}

/** A message's text to copy: as written, with mentions, rooms and emojis in words instead of tokens. */
export function copyable(content: string, names: { user: (id: string) => string; room: (id: string) => string }): string {
  const parts = content.split(/(```[\s\S]*?```|`[^`\n]+`)/);
  return parts
    .map((part, i) =>
      i % 2 === 1
        ? part
        : part.replace(/<@!?(\d{1,20})>|<#(\d{1,20})>|<a?:([A-Za-z0-9_]{2,32}):\d{1,20}>/g, (_t, user, room, emoji) =>
            user ? `@${names.user(user)}` : room ? `#${names.room(room)}` : `:${emoji}:`),
    )
    .join("");
}

/** 14:05, in the reader's language and the account's time zone. */
export function shortTime(iso: string): string {
  return formatDate(iso, "time");
}

/** "Today", "Yesterday" or the date, by the calendar of the account's time zone. */
export function dayLabel(iso: string, now: Date = new Date()): string {
  const day = dayKey(iso);
  if (day === dayKey(now)) return t("shell.day.today");
  // The calendar day before today's in that zone, as a "YYYY-MM-DD" key.
  const [y, m, d] = dayKey(now).split("-").map(Number);
  const before = new Date(Date.UTC(y, m - 1, d - 1)).toISOString().slice(0, 10);
  if (day === before) return t("shell.day.yesterday");
  return formatDate(iso, "day");
}

/** The whole moment (a tooltip), in the reader's language and zone. */
export function fullTime(iso: string): string {
  return formatDate(iso, "full");
}

/** "A is typing…", "A and B are typing…", "Several people are typing…". */
export function typingText(names: string[]): string {
  if (names.length === 0) return "";
  if (names.length === 1) return t("shell.typing.one", { a: names[0] });
  if (names.length === 2) return t("shell.typing.two", { a: names[0], b: names[1] });
  if (names.length === 3) return t("shell.typing.three", { a: names[0], b: names[1], c: names[2] });
  return t("shell.typing.several");
}

/** Two messages from the same author within 7 minutes share one header. */
export function continues(prev: { author: { id: string } | null; created_at: string; kind: string } | undefined,
  next: { author: { id: string } | null; created_at: string; kind: string; reply_to_id?: string | null }): boolean {
  if (!prev || !prev.author || !next.author || prev.author.id !== next.author.id) return false;
  if (prev.kind === "system" || next.kind === "system" || next.reply_to_id) return false;
  return Date.parse(next.created_at) - Date.parse(prev.created_at) < 7 * 60 * 1000;
}
