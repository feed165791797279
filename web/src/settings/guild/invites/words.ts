// Invitations in words (OpenAPI: listInvites, createInvite): the choices of the creation form and how
// long an invitation still lasts and how often it may still be used.

import type { Invite } from "../../../lib/types";
import { t, type Key } from "../../../i18n/index.svelte";

export const EXPIRY_CHOICES: readonly { key: Key; seconds: number }[] = [
  { key: "guild.invites.expiry.30m", seconds: 1800 },
  { key: "guild.invites.expiry.1h", seconds: 3600 },
  { key: "guild.invites.expiry.6h", seconds: 21600 },
  { key: "guild.invites.expiry.12h", seconds: 43200 },
  { key: "guild.invites.expiry.1d", seconds: 86400 },
  { key: "guild.invites.expiry.7d", seconds: 604800 },
  { key: "guild.invites.expiry.never", seconds: 0 },
];

/** The choices of a use limit (0: none). */
export const MAX_USES_CHOICES: readonly { uses: number }[] = [
  { uses: 0 }, { uses: 1 }, { uses: 5 }, { uses: 10 }, { uses: 25 }, { uses: 50 }, { uses: 100 },
];

export function maxUsesWords(uses: number): string {
  return uses ? t("guild.invites.maxUses.n", { n: uses }) : t("guild.invites.maxUses.none");
}

/** A span of time in the largest whole unit. */
function span(ms: number): { unit: "second" | "minute" | "hour" | "day"; n: number } {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return { unit: "second", n: s };
  const m = Math.floor(s / 60);
  if (m < 60) return { unit: "minute", n: m };
  const h = Math.floor(m / 60);
  if (h < 24) return { unit: "hour", n: h };
  return { unit: "day", n: Math.floor(h / 24) };
}

/** A span of time in the largest whole unit: "45 seconds", "3 minutes", "5 hours", "2 days". */
export function spanWords(ms: number): string {
  return t("guild.invites.span", span(ms));
}

export function expiryWords(invite: Pick<Invite, "expires_at">, now: number = Date.now()): string {
  if (!invite.expires_at) return t("guild.invites.neverExpires");
  const left = Date.parse(invite.expires_at) - now;
  return left <= 0 ? t("guild.invites.expired") : t("guild.invites.expiresIn", span(left));
}

export function usesWords(invite: Pick<Invite, "uses" | "max_uses">): string {
  const used = invite.uses ?? 0;
  return invite.max_uses ? t("guild.invites.usesOf", { used, max: invite.max_uses }) : t("guild.invites.usesNoLimit", { used });
}
