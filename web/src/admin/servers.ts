// The logic of Administration → Servers (Servers.svelte), tested by Vitest: the list's query from the
// filters, and how one answered server changes the loaded list (the main flag is one server's at a time).

import type { Guild } from "../lib/types";
import type { AdminGuild } from "./types";

export const SERVERS_PAGE = 50;

export interface ServerFilters {
  q: string;
  mainOnly: boolean;
}

/** The query of listInstanceGuilds: the name search trimmed (absent when empty), `main=true` for the filter. */
export function serversQuery(filters: ServerFilters, before?: string): Record<string, string | number | undefined> {
  const q = filters.q.trim();
  return { limit: SERVERS_PAGE, q: q || undefined, main: filters.mainOnly ? "true" : undefined, before };
}

/** The list after the service answered `updated`: that server replaced (its owner kept), the main flag taken
 *  from every other one when it became main, and, under "Main server only", a server no longer main gone. */
export function withUpdate(list: AdminGuild[], updated: Guild, mainOnly: boolean): { list: AdminGuild[]; removed: number } {
  let next = list.map((g) => (g.id === updated.id ? { ...g, ...updated, owner: g.owner } : updated.is_main && g.is_main ? { ...g, is_main: false } : g));
  const before = next.length;
  if (mainOnly) next = next.filter((g) => g.is_main);
  return { list: next, removed: before - next.length };
}
