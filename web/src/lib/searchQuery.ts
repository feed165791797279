// The server search box's language (docs/search.md, "In the web client"): free words, plus `in: #room` to keep
// to one room and `from: @name` to keep to one author. Filters may stand anywhere; what they name is matched
// against the rooms and members the client knows, case-insensitively. Pure, so it is unit-tested.

export interface SearchRoom {
  id: string;
  name: string;
}

export interface SearchPerson {
  id: string;
  username: string;
  /** Display name and nickname: a person may be written by either when it has no spaces. */
  names: string[];
}

export interface ParsedSearch {
  /** The words to search for (filters removed). */
  q: string;
  channelId: string | null;
  authorId: string | null;
  /** A filter naming no known room or person, as typed (the search is not run). */
  unknown: string | null;
}

// `in:` / `from:` then optional spaces, then the name with or without its mark; a name is up to the next space.
const FILTER = /(^|\s)(in|from):\s*([#@]?)(\S*)/gi;

export function parseSearch(text: string, rooms: SearchRoom[], people: SearchPerson[]): ParsedSearch {
  let channelId: string | null = null;
  let authorId: string | null = null;
  let unknown: string | null = null;
  const q = text.replace(FILTER, (whole, lead: string, kind: string, _mark: string, name: string) => {
    if (!name) return whole; // "in:" alone is a word being typed, or searched for
    const wanted = name.toLowerCase();
    if (kind.toLowerCase() === "in") {
      const room = rooms.find((r) => r.name.toLowerCase() === wanted);
      if (room) channelId = room.id;
      else unknown ??= `#${name}`;
    } else {
      const person = people.find((p) => p.username.toLowerCase() === wanted)
        ?? people.find((p) => p.names.some((n) => n.toLowerCase() === wanted));
      if (person) authorId = person.id;
      else unknown ??= `@${name}`;
    }
    return lead;
  });
  return { q: q.replace(/\s+/g, " ").trim(), channelId, authorId, unknown };
}

export interface ActiveFilter {
  kind: "in" | "from";
  /** Where the name (with its mark) starts and what of it is typed so far. */
  start: number;
  query: string;
}

/** The filter whose name the caret is in (`in: #ge|`, `from:@al|`), for completion. */
export function activeFilter(text: string, caret: number): ActiveFilter | null {
  const before = text.slice(0, caret);
  const m = /(?:^|\s)(in|from):\s*([#@]?)(\S*)$/i.exec(before);
  if (!m) return null;
  const typed = m[2] + m[3];
  return { kind: m[1].toLowerCase() as "in" | "from", start: caret - typed.length, query: m[3] };
}

/** The text with the active filter's name replaced by the chosen one, and the caret after it. */
export function completeFilter(text: string, active: ActiveFilter, name: string): { text: string; caret: number } {
  const mark = active.kind === "in" ? "#" : "@";
  let end = active.start;
  while (end < text.length && !/\s/.test(text[end])) end++;
  const rest = text.slice(end);
  const inserted = `${mark}${name}${rest.startsWith(" ") ? "" : " "}`;
  return { text: text.slice(0, active.start) + inserted + rest, caret: active.start + inserted.length };
}
