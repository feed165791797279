// Invitations in words (OpenAPI: listInvites, createInvite): the choices of the creation form and how
// long an invitation still lasts and how often it may still be used.

import type { Invite } from "../../../lib/types";

export const EXPIRY_CHOICES: readonly { label: string; seconds: number }[] = [
  { label: "30 minutes", seconds: 1800 },
  { label: "1 hour", seconds: 3600 },
  { label: "6 hours", seconds: 21600 },
  { label: "12 hours", seconds: 43200 },
  { label: "1 day", seconds: 86400 },
  { label: "7 days", seconds: 604800 },
  { label: "Never", seconds: 0 },
];

export const MAX_USES_CHOICES: readonly { label: string; uses: number }[] = [
  { label: "No limit", uses: 0 },
  { label: "1 use", uses: 1 },
  { label: "5 uses", uses: 5 },
  { label: "10 uses", uses: 10 },
  { label: "25 uses", uses: 25 },
  { label: "50 uses", uses: 50 },
  { label: "100 uses", uses: 100 },
];

const plural = (n: number, unit: string): string => `${n} ${unit}${n === 1 ? "" : "s"}`;

/** A span of time in the largest whole unit: "45 seconds", "3 minutes", "5 hours", "2 days". */
export function spanWords(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return plural(s, "second");
  const m = Math.floor(s / 60);
  if (m < 60) return plural(m, "minute");
  const h = Math.floor(m / 60);
  if (h < 24) return plural(h, "hour");
  return plural(Math.floor(h / 24), "day");
}

export function expiryWords(invite: Pick<Invite, "expires_at">, now: number = Date.now()): string {
  if (!invite.expires_at) return "Never expires";
  const left = Date.parse(invite.expires_at) - now;
  return left <= 0 ? "Expired" : `Expires in ${spanWords(left)}`;
}

export function usesWords(invite: Pick<Invite, "uses" | "max_uses">): string {
  const used = invite.uses ?? 0;
  return invite.max_uses ? `${used} of ${invite.max_uses} uses` : `${plural(used, "use")}, no limit`;
}
