// Roles by rank (OpenAPI: listRoles, reorderRoles, updateRole): the list shows the highest first with
// the default role @user at the bottom; who may change which role follows the hierarchy of
// docs/reference/permissions.md (strictly below the caller's highest role; the owner and instance
// administrators above everyone).

import type { GuildSnapshot, Id, Role } from "../../../lib/types";

/** Above every role position: the owner, an instance administrator. */
export const TOP_RANK = Number.MAX_SAFE_INTEGER;

export function sortedRoles(roles: Role[]): Role[] {
  const others = roles.filter((r) => !r.is_default).sort((a, b) => b.position - a.position || a.id.localeCompare(b.id));
  return [...others, ...roles.filter((r) => r.is_default)];
}

export function rankOf(guild: GuildSnapshot, userId: Id | undefined, isAdmin: boolean): number {
  if (isAdmin || guild.owner_id === userId) return TOP_RANK;
  const held = new Set(guild.member.roles);
  return Math.max(0, ...guild.roles.filter((r) => held.has(r.id)).map((r) => r.position));
}

/** May the caller edit this role at all (the default role: its permissions only). */
export function canEditRole(role: Role, rank: number): boolean {
  return role.is_default || role.position < rank;
}

/** The full order of the roles the caller may move after moving one by `delta` (+1 up, -1 down),
 * bottom-up from position 1, as PATCH /guilds/{id}/roles takes it; null when it cannot move. */
export function roleMovePayload(roles: Role[], rank: number, id: Id, delta: 1 | -1): { id: Id; position: number }[] | null {
  const movable = roles.filter((r) => !r.is_default && r.position < rank).sort((a, b) => a.position - b.position || a.id.localeCompare(b.id));
  const i = movable.findIndex((r) => r.id === id);
  const j = i + delta;
  if (i < 0 || j < 0 || j >= movable.length) return null;
  [movable[i], movable[j]] = [movable[j], movable[i]];
  return movable.map((r, k) => ({ id: r.id, position: k + 1 }));
}

/** "#rrggbb" of a role colour; 0 is "no colour". */
export function colorHex(color: number): string {
  return `#${color.toString(16).padStart(6, "0")}`;
}

export function colorValue(hex: string): number {
  const n = parseInt(hex.replace(/^#/, ""), 16);
  return Number.isFinite(n) ? n & 0xffffff : 0;
}
