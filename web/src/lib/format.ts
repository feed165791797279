// Message text into segments the screens render as elements (never as HTML): mentions of users and
// rooms, custom emojis, links, `code`, ```blocks```, **bold**, *italic*, ~~strike~~. docs/client.md.

export type Segment =
  | { kind: "text"; text: string }
  | { kind: "bold" | "italic" | "strike"; children: Segment[] }
  | { kind: "code"; text: string }
  | { kind: "codeblock"; text: string }
  | { kind: "link"; href: string; text: string }
  | { kind: "user"; id: string }
  | { kind: "room"; id: string }
  | { kind: "everyone" }
  | { kind: "emoji"; name: string; id: string };

const TOKEN =
  /```(?:[a-z0-9_+-]*\n)?([\s\S]*?)```|`([^`\n]+)`|<@!?(\d{1,20})>|<#(\d{1,20})>|<a?:([A-Za-z0-9_]{2,32}):(\d{1,20})>|(https?:\/\/[^\s<>"]+[^\s<>".,;:!?)\]'])|\*\*([\s\S]+?)\*\*|~~([\s\S]+?)~~|\*([^*\s][^*]*?)\*|(@everyone)/g;

export function parse(content: string): Segment[] {
  const out: Segment[] = [];
  let last = 0;
  TOKEN.lastIndex = 0;
  for (const m of content.matchAll(TOKEN)) {
    const at = m.index ?? 0;
    if (at > last) out.push({ kind: "text", text: content.slice(last, at) });
    last = at + m[0].length;
    if (m[1] !== undefined) out.push({ kind: "codeblock", text: m[1] });
    else if (m[2] !== undefined) out.push({ kind: "code", text: m[2] });
    else if (m[3] !== undefined) out.push({ kind: "user", id: m[3] });
    else if (m[4] !== undefined) out.push({ kind: "room", id: m[4] });
    else if (m[5] !== undefined) out.push({ kind: "emoji", name: m[5], id: m[6] });
    else if (m[7] !== undefined) out.push({ kind: "link", href: m[7], text: m[7] });
    else if (m[8] !== undefined) out.push({ kind: "bold", children: parse(m[8]) });
    else if (m[9] !== undefined) out.push({ kind: "strike", children: parse(m[9]) });
    else if (m[10] !== undefined) out.push({ kind: "italic", children: parse(m[10]) });
    else if (m[11] !== undefined) out.push({ kind: "everyone" });
  }
  if (last < content.length) out.push({ kind: "text", text: content.slice(last) });
  return out;
}

/** The plain words of a message, for previews and accessible names. */
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
          default:
            return walk(s.children);
        }
      })
      .join("");
  return walk(parse(content));
}

const TIME = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const DAY = new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", day: "numeric" });

export function shortTime(iso: string): string {
  return TIME.format(new Date(iso));
}

export function dayLabel(iso: string, now: Date = new Date()): string {
  const d = new Date(iso);
  const sameDay = (a: Date, b: Date) =>
    a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();
  if (sameDay(d, now)) return "Today";
  const yesterday = new Date(now);
  yesterday.setDate(now.getDate() - 1);
  if (sameDay(d, yesterday)) return "Yesterday";
  return DAY.format(d);
}

export function fullTime(iso: string): string {
  return new Date(iso).toLocaleString();
}

/** "A is typing…", "A and B are typing…", "Several people are typing…". */
export function typingText(names: string[]): string {
  if (names.length === 0) return "";
  if (names.length === 1) return `${names[0]} is typing…`;
  if (names.length === 2) return `${names[0]} and ${names[1]} are typing…`;
  if (names.length === 3) return `${names[0]}, ${names[1]} and ${names[2]} are typing…`;
  return "Several people are typing…";
}

/** Two messages from the same author within 7 minutes share one header. */
export function continues(prev: { author: { id: string } | null; created_at: string; kind: string } | undefined,
  next: { author: { id: string } | null; created_at: string; kind: string; reply_to_id?: string | null }): boolean {
  if (!prev || !prev.author || !next.author || prev.author.id !== next.author.id) return false;
  if (prev.kind === "system" || next.kind === "system" || next.reply_to_id) return false;
  return Date.parse(next.created_at) - Date.parse(prev.created_at) < 7 * 60 * 1000;
}
