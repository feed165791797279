// Which controls to offer: the permissions of the signed-in member in a room, computed the way the
// service does (docs/reference/permissions.md). The service still decides; this only hides buttons
// that would be refused.

import { ALL_PERMISSIONS as ALL, PERMISSION_BITS, PERMISSION_NAMES, type PermissionName } from "./generated/permissions";
import type { Channel, GuildSnapshot } from "./types";

export { PERMISSION_NAMES, type PermissionName };

/** The permissions by name (P.KICK_MEMBERS = 1n << 1n, ...), from the service's registry (generated/permissions.ts). */
export const P = PERMISSION_BITS;

/** The permission names set in `value`, joined as the service writes them ("A|B"; "" for none). */
export function names(value: bigint): string {
  return PERMISSION_NAMES.filter((name) => value & P[name]).join("|");
}

export function bits(names: string): bigint {
  let value = 0n;
  for (const name of names.split("|")) {
    const trimmed = name.trim();
    if (Object.hasOwn(P, trimmed)) value |= P[trimmed as PermissionName];
  }
  return value;
}

export function permissionsIn(guild: GuildSnapshot, userId: string, isAdmin: boolean, channel?: Channel): bigint {
  if (isAdmin || guild.owner_id === userId) return ALL;
  const member = guild.member;
  const held = new Set(member.roles);
  let base = 0n;
  for (const role of guild.roles) if (role.is_default || held.has(role.id)) base |= bits(role.permissions);
  if (base & P.ADMINISTRATOR) return ALL;
  let value = base;
  if (channel) {
    const overrides = channel.permission_overrides;
    const everyone = overrides.find((o) => o.type === "role" && o.id === guild.id);
    if (everyone) value = (value & ~bits(everyone.deny)) | bits(everyone.allow);
    let deny = 0n;
    let allow = 0n;
    for (const o of overrides) {
      if (o.type === "role" && o.id !== guild.id && held.has(o.id)) {
        deny |= bits(o.deny);
        allow |= bits(o.allow);
      }
    }
    value = (value & ~deny) | allow;
    const mine = overrides.find((o) => o.type === "member" && o.id === userId);
    if (mine) value = (value & ~bits(mine.deny)) | bits(mine.allow);
    if (!(value & P.VIEW_CHANNEL)) return 0n;
  }
  if (member.timeout_until && Date.parse(member.timeout_until) > Date.now()) {
    value &= P.VIEW_CHANNEL | P.READ_MESSAGE_HISTORY;
  }
  return value;
}

export function has(value: bigint, flag: bigint): boolean {
  return (value & flag) === flag;
}
