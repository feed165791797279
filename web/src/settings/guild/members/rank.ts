// Who may act on whom in the members list, read the way the service decides it (OpenAPI: updateMember,
// kickMember, banUser, addMemberRole): a member's rank is the highest position among their roles, the owner
// ranks above everyone and an instance administrator bypasses. This only hides actions the service would
// refuse; it still decides and its refusals are shown in words.

import { t, type Key } from "../../../i18n/index.svelte";
import { bits, P } from "../../../lib/permissions";
import type { GuildSnapshot, Id, Member, Role } from "../../../lib/types";

/** The rank of a member holding `roles` (role ids, the default role left out). */
export function rankOf(guild: GuildSnapshot, userId: Id, roles: Id[]): number {
  if (userId === guild.owner_id) return Infinity;
  let rank = 0;
  for (const role of guild.roles) if (roles.includes(role.id) && role.position > rank) rank = role.position;
  return rank;
}

/** The signed-in person's rank (their own membership is `guild.member`). */
export function myRank(guild: GuildSnapshot, meId: Id, isAdmin: boolean): number {
  if (isAdmin) return Infinity;
  return rankOf(guild, meId, guild.member.roles);
}

/** Kick, ban, timeout and others' nicknames: never on oneself nor the owner, only on members ranked below. */
export function canActOn(guild: GuildSnapshot, meId: Id, isAdmin: boolean, target: Member): boolean {
  if (target.user.id === meId || target.user.id === guild.owner_id) return false;
  return isAdmin || rankOf(guild, target.user.id, target.roles) < myRank(guild, meId, isAdmin);
}

/** Whether the member holds ADMINISTRATOR through a role (the service never times them out). */
export function holdsAdministrator(guild: GuildSnapshot, member: Member): boolean {
  return guild.roles.some((r) => (r.is_default || member.roles.includes(r.id)) && (bits(r.permissions) & P.ADMINISTRATOR) !== 0n);
}

/** The roles the signed-in person may give or take: not the default role, strictly below their rank,
 * highest first. */
export function assignableRoles(guild: GuildSnapshot, meId: Id, isAdmin: boolean): Role[] {
  const rank = myRank(guild, meId, isAdmin);
  return guild.roles.filter((r) => !r.is_default && r.position < rank).sort((a, b) => b.position - a.position);
}

/** The durations a moderator picks for a timeout. */
const TIMEOUT_WORDS: readonly [seconds: number, unit: Key, count: number][] = [
  [60, "roles.duration.seconds", 60],
  [300, "roles.duration.minutes", 5],
  [600, "roles.duration.minutes", 10],
  [3600, "roles.duration.hours", 1],
  [86400, "roles.duration.days", 1],
  [604800, "roles.duration.weeks", 1],
];
export const TIMEOUTS: readonly { readonly label: string; seconds: number }[] = TIMEOUT_WORDS.map(([seconds, unit, count]) => ({
  seconds,
  get label() {
    return t(unit, { count });
  },
}));

/** The `timeout_until` of a timeout starting now. */
export function timeoutUntil(seconds: number, now: number = Date.now()): string {
  return new Date(now + seconds * 1000).toISOString();
}

/** A running timeout's end, else null (the service shows none once it has lapsed). */
export function activeTimeout(member: Pick<Member, "timeout_until">, now: number = Date.now()): string | null {
  const until = member.timeout_until;
  return until && Date.parse(until) > now ? until : null;
}
