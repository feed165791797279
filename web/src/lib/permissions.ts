// Which controls to offer: the permissions of the signed-in member in a room, computed the way the
// service does (docs/reference/permissions.md). The service still decides; this only hides buttons
// that would be refused.

import type { Channel, GuildSnapshot } from "./types";



const ALL = (1n << 37n) - 1n;
const NAMES = [
  "CREATE_INVITE", "KICK_MEMBERS", "BAN_MEMBERS", "ADMINISTRATOR", "MANAGE_CHANNELS", "MANAGE_GUILD",
  "ADD_REACTIONS", "VIEW_AUDIT_LOG", "PRIORITY_SPEAKER", "STREAM", "VIEW_CHANNEL", "SEND_MESSAGES",
  "SEND_SCREAMS", "MANAGE_MESSAGES", "EMBED_LINKS", "ATTACH_FILES", "READ_MESSAGE_HISTORY", "MENTION_EVERYONE",
  "USE_EXTERNAL_EMOJIS", "BYPASS_SLOWMODE", "CONNECT_VOICE", "SPEAK", "MUTE_MEMBERS", "DEAFEN_MEMBERS",
  "MOVE_MEMBERS", "USE_VAD", "CHANGE_NICKNAME", "MANAGE_NICKNAMES", "MANAGE_ROLES", "MANAGE_WEBHOOKS",
  "MANAGE_EMOJIS", "MANAGE_SOUNDS", "USE_SOUNDBOARD", "SEND_PRIVATE_MESSAGES", "MANAGE_CHANNEL_BACKGROUND",
  "MODERATE_MEMBERS", "VIDEO",
] as const;

/** The 37 permissions by name, in bit order (P.KICK_MEMBERS = 1n << 1n, ...). */
export const PERMISSION_NAMES: readonly string[] = NAMES;
export const P = Object.fromEntries(NAMES.map((name, i) => [name, 1n << BigInt(i)])) as Record<(typeof NAMES)[number], bigint>;

/** The permission names set in `value`, joined as the service writes them ("A|B"; "" for none). */
export function names(value: bigint): string {
  return NAMES.filter((_, i) => value & (1n << BigInt(i))).join("|");
}

export function bits(names: string): bigint {
  let value = 0n;
  for (const name of names.split("|")) {
    const i = PERMISSION_NAMES.indexOf(name.trim());
    if (i >= 0) value |= 1n << BigInt(i);
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
