// The 37 permissions in words for the role and override editors: a short name, one sentence of what
// it lets a member do (after docs/reference/permissions.md), the group it is shown under, and whether
// it means anything inside one room (only those are offered in a room's overrides).

import { t, type Key } from "../../i18n/index.svelte";
import { P, PERMISSION_NAMES, type PermissionName } from "../../lib/permissions";

export type PermissionGroup = "General" | "Membership" | "Text" | "Voice" | "Advanced";
export const PERMISSION_GROUPS: readonly PermissionGroup[] = ["General", "Membership", "Text", "Voice", "Advanced"];

const GROUP_LABELS: Record<PermissionGroup, Key> = {
  General: "roles.permissionGroup.general",
  Membership: "roles.permissionGroup.membership",
  Text: "roles.permissionGroup.text",
  Voice: "roles.permissionGroup.voice",
  Advanced: "roles.permissionGroup.advanced",
};

/** A group's heading in the shown language. */
export function groupLabel(group: PermissionGroup): string {
  return t(GROUP_LABELS[group]);
}

export interface PermissionText {
  /** The name as the service writes it (`VIEW_CHANNEL`). */
  name: string;
  bit: bigint;
  /** The short name and the sentence in the shown language. */
  readonly label: string;
  readonly explain: string;
  group: PermissionGroup;
  /** Has an effect inside a room or category, so an override may allow or deny it. */
  room: boolean;
}

type Entry = [label: Key, explain: Key, group: PermissionGroup, room: boolean];

// Keyed by the generated names: a permission the service adds fails the type check until it has its words.
const TEXT: Record<PermissionName, Entry> = {
  CREATE_INVITE: ["roles.permission.createInvite", "roles.permission.createInvite.explain", "Membership", true],
  KICK_MEMBERS: ["roles.permission.kickMembers", "roles.permission.kickMembers.explain", "Membership", false],
  BAN_MEMBERS: ["roles.permission.banMembers", "roles.permission.banMembers.explain", "Membership", false],
  ADMINISTRATOR: ["roles.permission.administrator", "roles.permission.administrator.explain", "Advanced", false],
  MANAGE_CHANNELS: ["roles.permission.manageChannels", "roles.permission.manageChannels.explain", "General", true],
  MANAGE_GUILD: ["roles.permission.manageGuild", "roles.permission.manageGuild.explain", "General", false],
  ADD_REACTIONS: ["roles.permission.addReactions", "roles.permission.addReactions.explain", "Text", true],
  VIEW_AUDIT_LOG: ["roles.permission.viewAuditLog", "roles.permission.viewAuditLog.explain", "General", false],
  PRIORITY_SPEAKER: ["roles.permission.prioritySpeaker", "roles.permission.prioritySpeaker.explain", "Voice", true],
  STREAM: ["roles.permission.stream", "roles.permission.stream.explain", "Voice", true],
  VIEW_CHANNEL: ["roles.permission.viewChannel", "roles.permission.viewChannel.explain", "General", true],
  SEND_MESSAGES: ["roles.permission.sendMessages", "roles.permission.sendMessages.explain", "Text", true],
  SEND_SCREAMS: ["roles.permission.sendScreams", "roles.permission.sendScreams.explain", "Text", true],
  MANAGE_MESSAGES: ["roles.permission.manageMessages", "roles.permission.manageMessages.explain", "Text", true],
  EMBED_LINKS: ["roles.permission.embedLinks", "roles.permission.embedLinks.explain", "Text", true],
  ATTACH_FILES: ["roles.permission.attachFiles", "roles.permission.attachFiles.explain", "Text", true],
  READ_MESSAGE_HISTORY: ["roles.permission.readMessageHistory", "roles.permission.readMessageHistory.explain", "Text", true],
  MENTION_EVERYONE: ["roles.permission.mentionEveryone", "roles.permission.mentionEveryone.explain", "Text", true],
  USE_EXTERNAL_EMOJIS: ["roles.permission.useExternalEmojis", "roles.permission.useExternalEmojis.explain", "Text", true],
  BYPASS_SLOWMODE: ["roles.permission.bypassSlowmode", "roles.permission.bypassSlowmode.explain", "Text", true],
  CONNECT_VOICE: ["roles.permission.connectVoice", "roles.permission.connectVoice.explain", "Voice", true],
  SPEAK: ["roles.permission.speak", "roles.permission.speak.explain", "Voice", true],
  MUTE_MEMBERS: ["roles.permission.muteMembers", "roles.permission.muteMembers.explain", "Voice", true],
  DEAFEN_MEMBERS: ["roles.permission.deafenMembers", "roles.permission.deafenMembers.explain", "Voice", true],
  MOVE_MEMBERS: ["roles.permission.moveMembers", "roles.permission.moveMembers.explain", "Voice", true],
  USE_VAD: ["roles.permission.useVad", "roles.permission.useVad.explain", "Voice", true],
  CHANGE_NICKNAME: ["roles.permission.changeNickname", "roles.permission.changeNickname.explain", "Membership", false],
  MANAGE_NICKNAMES: ["roles.permission.manageNicknames", "roles.permission.manageNicknames.explain", "Membership", false],
  MANAGE_ROLES: ["roles.permission.manageRoles", "roles.permission.manageRoles.explain", "General", true],
  MANAGE_WEBHOOKS: ["roles.permission.manageWebhooks", "roles.permission.manageWebhooks.explain", "Advanced", true],
  MANAGE_EMOJIS: ["roles.permission.manageEmojis", "roles.permission.manageEmojis.explain", "General", false],
  MANAGE_SOUNDS: ["roles.permission.manageSounds", "roles.permission.manageSounds.explain", "General", false],
  USE_SOUNDBOARD: ["roles.permission.useSoundboard", "roles.permission.useSoundboard.explain", "Voice", true],
  SEND_PRIVATE_MESSAGES: ["roles.permission.sendPrivateMessages", "roles.permission.sendPrivateMessages.explain", "Text", true],
  MANAGE_CHANNEL_BACKGROUND: ["roles.permission.manageChannelBackground", "roles.permission.manageChannelBackground.explain", "Advanced", true],
  MODERATE_MEMBERS: ["roles.permission.moderateMembers", "roles.permission.moderateMembers.explain", "Membership", false],
  VIDEO: ["roles.permission.video", "roles.permission.video.explain", "Voice", true],
};

/** Every permission, in bit order. */
export const PERMISSIONS: readonly PermissionText[] = PERMISSION_NAMES.map((name) => {
  const [label, explain, group, room] = TEXT[name];
  return {
    name,
    bit: P[name],
    get label() {
      return t(label);
    },
    get explain() {
      return t(explain);
    },
    group,
    room,
  };
});

/** The permissions a room's override may allow or deny (never ADMINISTRATOR). */
export const ROOM_PERMISSIONS: readonly PermissionText[] = PERMISSIONS.filter((p) => p.room && p.bit !== P.ADMINISTRATOR);

/** The permissions of one group, in bit order. */
export function permissionsOf(group: PermissionGroup, list: readonly PermissionText[] = PERMISSIONS): PermissionText[] {
  return list.filter((p) => p.group === group);
}
