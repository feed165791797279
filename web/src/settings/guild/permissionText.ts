// The 37 permissions in words for the role and override editors: a short name, one sentence of what
// it lets a member do (after docs/reference/permissions.md), the group it is shown under, and whether
// it means anything inside one room (only those are offered in a room's overrides).

import { P, PERMISSION_NAMES, type PermissionName } from "../../lib/permissions";

export type PermissionGroup = "General" | "Membership" | "Text" | "Voice" | "Advanced";
export const PERMISSION_GROUPS: readonly PermissionGroup[] = ["General", "Membership", "Text", "Voice", "Advanced"];

export interface PermissionText {
  /** The name as the service writes it (`VIEW_CHANNEL`). */
  name: string;
  bit: bigint;
  label: string;
  explain: string;
  group: PermissionGroup;
  /** Has an effect inside a room or category, so an override may allow or deny it. */
  room: boolean;
}

type Entry = [label: string, explain: string, group: PermissionGroup, room: boolean];

// Keyed by the generated names: a permission the service adds fails the type check until it has its words.
const TEXT: Record<PermissionName, Entry> = {
  CREATE_INVITE: ["Create invitations", "Invite people to the server through a room.", "Membership", true],
  KICK_MEMBERS: ["Kick members", "Remove members ranked below their highest role from the server.", "Membership", false],
  BAN_MEMBERS: ["Ban members", "Ban and unban people and see the list of bans.", "Membership", false],
  ADMINISTRATOR: ["Administrator", "Every permission in every room; overrides cannot take it away. Grant with care.", "Advanced", false],
  MANAGE_CHANNELS: ["Manage rooms", "Create, rename, reorder and delete rooms and categories.", "General", true],
  MANAGE_GUILD: ["Manage server", "Change the server's name, images, system room and public flag, and manage invitations.", "General", false],
  ADD_REACTIONS: ["Add reactions", "React to messages with emoji.", "Text", true],
  VIEW_AUDIT_LOG: ["View audit log", "Read the record of who changed what on the server.", "General", false],
  PRIORITY_SPEAKER: ["Priority speaker", "Be heard over others in voice: their volume is lowered while this member speaks.", "Voice", true],
  STREAM: ["Share screen", "Share their screen in voice rooms.", "Voice", true],
  VIEW_CHANNEL: ["View rooms", "See the room in the list and what is said in it from now on; earlier messages also need Read message history.", "General", true],
  SEND_MESSAGES: ["Send messages", "Write messages and show that they are typing.", "Text", true],
  SEND_SCREAMS: ["Send screams", "Use /scream to send a message in big, loud letters that stands out in the room.", "Text", true],
  MANAGE_MESSAGES: ["Manage messages", "Delete and edit others' messages, pin and unpin, remove others' reactions.", "Text", true],
  EMBED_LINKS: ["Embed links", "Have previews shown for the links they post.", "Text", true],
  ATTACH_FILES: ["Attach files", "Upload files and images with their messages.", "Text", true],
  READ_MESSAGE_HISTORY: ["Read message history", "Read earlier messages, pins, reactions and search results.", "Text", true],
  MENTION_EVERYONE: ["Mention everyone", "Notify every viewer of the room with @everyone.", "Text", true],
  USE_EXTERNAL_EMOJIS: ["Use emoji of other servers", "Use custom emoji from other servers in messages and reactions.", "Text", true],
  BYPASS_SLOWMODE: ["Bypass slowmode", "Send without waiting for the room's slowmode.", "Text", true],
  CONNECT_VOICE: ["Connect", "Join voice rooms and calls in them.", "Voice", true],
  SPEAK: ["Speak", "Use their microphone in voice rooms.", "Voice", true],
  MUTE_MEMBERS: ["Mute members", "Mute others in voice for everyone.", "Voice", true],
  DEAFEN_MEMBERS: ["Deafen members", "Deafen others in voice for everyone.", "Voice", true],
  MOVE_MEMBERS: ["Move members", "Move others between voice rooms and disconnect them from voice.", "Voice", true],
  USE_VAD: ["Use voice activity", "Transmit when they speak; without it they must use push-to-talk.", "Voice", true],
  CHANGE_NICKNAME: ["Change nickname", "Change their own nickname on this server.", "Membership", false],
  MANAGE_NICKNAMES: ["Manage nicknames", "Change the nicknames of members ranked below them.", "Membership", false],
  MANAGE_ROLES: ["Manage roles", "Create, edit, order and grant roles below their highest role, and edit room permissions.", "General", true],
  MANAGE_WEBHOOKS: ["Manage webhooks", "Create, edit and delete the webhooks of rooms.", "Advanced", true],
  MANAGE_EMOJIS: ["Manage emoji", "Upload, rename and delete the server's custom emoji.", "General", false],
  MANAGE_SOUNDS: ["Manage sounds", "Upload, rename and delete the server's sounds.", "General", false],
  USE_SOUNDBOARD: ["Use soundboard", "Play soundboard sounds while in a voice room.", "Voice", true],
  SEND_PRIVATE_MESSAGES: ["Send private messages", "Use /ls @person to say something in the room that only that person sees.", "Text", true],
  MANAGE_CHANNEL_BACKGROUND: ["Manage room background", "Set and remove a room's background image.", "Advanced", true],
  MODERATE_MEMBERS: ["Time out members", "Put members ranked below them in a timeout and lift it.", "Membership", false],
  VIDEO: ["Video", "Use their camera in voice rooms.", "Voice", true],
};

/** Every permission, in bit order. */
export const PERMISSIONS: readonly PermissionText[] = PERMISSION_NAMES.map((name) => {
  const [label, explain, group, room] = TEXT[name];
  return { name, bit: P[name], label, explain, group, room };
});

/** The permissions a room's override may allow or deny (never ADMINISTRATOR). */
export const ROOM_PERMISSIONS: readonly PermissionText[] = PERMISSIONS.filter((p) => p.room && p.bit !== P.ADMINISTRATOR);

/** The permissions of one group, in bit order. */
export function permissionsOf(group: PermissionGroup, list: readonly PermissionText[] = PERMISSIONS): PermissionText[] {
  return list.filter((p) => p.group === group);
}
