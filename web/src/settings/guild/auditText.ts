// The server's audit log in words (OpenAPI: listAuditLog; the actions a server's log holds are those of
// the service's audit catalogue scoped to a guild): a label per action for the filter, and a sentence per
// entry naming who did what to whom ("thor kicked loki", "freya changed the server name from A to B").
// Every sentence is one message of the `audit` catalogue with the names as placeholders.

import { t, type Key } from "../../i18n/index.svelte";
import { formatDate } from "../../i18n/format";
import type { AuditEntry } from "../../lib/types";

const ACTIONS: readonly (readonly [string, Key])[] = [
  ["guild.create", "audit.action.guildCreate"],
  ["guild.update", "audit.action.guildUpdate"],
  ["guild.owner_transfer", "audit.action.guildOwnerTransfer"],
  ["guild.delete", "audit.action.guildDelete"],
  ["channel.create", "audit.action.channelCreate"],
  ["channel.update", "audit.action.channelUpdate"],
  ["channel.delete", "audit.action.channelDelete"],
  ["channel.override_update", "audit.action.channelOverrideUpdate"],
  ["channel.override_delete", "audit.action.channelOverrideDelete"],
  ["channel.background_update", "audit.action.channelBackgroundUpdate"],
  ["role.create", "audit.action.roleCreate"],
  ["role.update", "audit.action.roleUpdate"],
  ["role.delete", "audit.action.roleDelete"],
  ["role.reorder", "audit.action.roleReorder"],
  ["member.nick_update", "audit.action.memberNickUpdate"],
  ["member.role_add", "audit.action.memberRoleAdd"],
  ["member.role_remove", "audit.action.memberRoleRemove"],
  ["member.timeout", "audit.action.memberTimeout"],
  ["member.timeout_clear", "audit.action.memberTimeoutClear"],
  ["member.kick", "audit.action.memberKick"],
  ["member.ban", "audit.action.memberBan"],
  ["member.unban", "audit.action.memberUnban"],
  ["invite.create", "audit.action.inviteCreate"],
  ["invite.delete", "audit.action.inviteDelete"],
  ["invite.background_update", "audit.action.inviteBackgroundUpdate"],
  ["message.delete", "audit.action.messageDelete"],
  ["message.pin", "audit.action.messagePin"],
  ["message.unpin", "audit.action.messageUnpin"],
  ["emoji.create", "audit.action.emojiCreate"],
  ["emoji.update", "audit.action.emojiUpdate"],
  ["emoji.delete", "audit.action.emojiDelete"],
  ["sound.create", "audit.action.soundCreate"],
  ["sound.update", "audit.action.soundUpdate"],
  ["sound.delete", "audit.action.soundDelete"],
  ["cosmetic.create", "audit.action.cosmeticCreate"],
  ["cosmetic.update", "audit.action.cosmeticUpdate"],
  ["cosmetic.delete", "audit.action.cosmeticDelete"],
  ["webhook.create", "audit.action.webhookCreate"],
  ["webhook.update", "audit.action.webhookUpdate"],
  ["webhook.delete", "audit.action.webhookDelete"],
  ["webhook.token_reset", "audit.action.webhookTokenReset"],
  ["webhook.avatar_update", "audit.action.webhookAvatarUpdate"],
  ["voice.mute", "audit.action.voiceMute"],
  ["voice.deafen", "audit.action.voiceDeafen"],
  ["voice.move", "audit.action.voiceMove"],
  ["voice.disconnect", "audit.action.voiceDisconnect"],
  ["template.create", "audit.action.templateCreate"],
  ["instance.guild_update", "audit.action.instanceGuildUpdate"],
  ["instance.guild_delete", "audit.action.instanceGuildDelete"],
  ["limits.bypass", "audit.action.limitsBypass"],
];

export interface AuditAction {
  action: string;
  key: Key;
  /** The label in the shown language. */
  readonly label: string;
}

/** Every action the service writes into a server's audit log, with a label for the filter. */
export const GUILD_AUDIT_ACTIONS: readonly AuditAction[] = ACTIONS.map(([action, key]) => ({
  action,
  key,
  get label() {
    return t(key);
  },
}));

export function actionLabel(action: string): string {
  return GUILD_AUDIT_ACTIONS.find((a) => a.action === action)?.label ?? action;
}

/** How the screen names what an entry points at; null when it is not known (any more). */
export interface Names {
  user: (id: string) => string | null;
  role: (id: string) => string | null;
  room: (id: string) => string | null;
  /** A moment in words (local time). */
  time?: (iso: string) => string;
}

type Data = Record<string, unknown>;

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : typeof v === "number" ? String(v) : null);

const quote = (text: string): string => t("audit.quoted", { text });

function quoted(v: unknown): string {
  if (v === null || v === undefined || v === "") return t("audit.value.nothing");
  if (typeof v === "boolean") return v ? t("audit.value.yes") : t("audit.value.no");
  return quote(String(v));
}

const GUILD_FIELDS: Record<string, Key> = {
  name: "audit.field.serverName",
  description: "audit.field.description",
  system_channel_id: "audit.field.systemRoom",
  owner_id: "audit.field.owner",
  public: "audit.field.public",
  icon_file_id: "audit.field.icon",
  banner_file_id: "audit.field.banner",
  splash_file_id: "audit.field.splash",
};

const ROOM_FIELDS: Record<string, Key> = {
  name: "audit.field.name",
  topic: "audit.field.topic",
  parent_id: "audit.field.category",
  position: "audit.field.position",
  slowmode_seconds: "audit.field.slowmode",
  user_limit: "audit.field.userLimit",
};

const ROLE_FIELDS: Record<string, Key> = {
  name: "audit.field.name",
  color: "audit.field.colour",
  permissions: "audit.field.permissions",
  hoist: "audit.field.hoist",
  frame_id: "audit.field.frame",
  icon_id: "audit.field.icon",
};

/** One change of a `data.changes` map in words: "changed the server name from “A” to “B”", and the
 * same without its verb for a sentence that has one already ("the topic from nothing to “Skål”"). */
interface Change {
  full: string;
  bare: string;
}

function change(field: string, pair: unknown, labels: Record<string, Key>, names: Names): Change {
  const label = labels[field] ? t(labels[field]) : field.replace(/_/g, " ");
  const [before, after] = Array.isArray(pair) ? pair : [undefined, pair];
  const same = (text: string): Change => ({ full: text, bare: text });
  if (field.endsWith("_file_id") || field === "frame_id" || field === "icon_id") {
    if (after === null || after === undefined) return same(t("audit.change.removed", { field: label }));
    return same(before ? t("audit.change.replaced", { field: label }) : t("audit.change.set", { field: label }));
  }
  if (field === "public") return same(after ? t("audit.change.public") : t("audit.change.private"));
  if (field === "permissions") return { full: t("audit.change.changed", { field: label }), bare: t("audit.change.changedBare", { field: label }) };
  const word = (v: unknown): string => {
    if (field === "system_channel_id" || field === "parent_id") {
      const id = str(v);
      if (!id) return t("audit.value.none");
      const room = names.room(id);
      return room ? (field === "parent_id" ? quote(room) : `#${room}`) : t("audit.value.deletedRoom");
    }
    if (field === "owner_id") {
      const id = str(v);
      return id ? names.user(id) ?? t("audit.value.someone") : t("audit.value.nobody");
    }
    if (field === "color" && typeof v === "number") return v ? `#${v.toString(16).padStart(6, "0")}` : t("audit.value.noColour");
    return quoted(v);
  };
  const values = { field: label, before: word(before), after: word(after) };
  return { full: t("audit.change.fromTo", values), bare: t("audit.change.fromToBare", values) };
}

function changes(data: Data, labels: Record<string, Key>, names: Names): Change[] {
  const map = data.changes;
  if (!map || typeof map !== "object") return [];
  // The public invitation's code follows the public flag, which is worded already.
  return Object.entries(map as Data)
    .filter(([field]) => field !== "public_invite_code" && field !== "name_norm")
    .map(([field, pair]) => change(field, pair, labels, names));
}

/** "a, b and c" in the shown language. */
function list(parts: string[]): string {
  if (parts.length <= 1) return parts[0] ?? "";
  return t("audit.list", { rest: parts.slice(0, -1).join(", "), last: parts[parts.length - 1] });
}

const yes = (v: unknown): "yes" | "no" => (v ? "yes" : "no");

/** The sentence of one entry, without its reason (shown next to it). */
export function describeEntry(entry: AuditEntry, names: Names): string {
  const data: Data = entry.data ?? {};
  const actor = entry.actor?.display_name ?? (entry.actor_id ? names.user(entry.actor_id) : null) ?? t("audit.value.system");
  const who = (id: string | null | undefined): string => (id ? names.user(id) ?? t("audit.value.formerMember") : t("audit.value.someone"));
  const target = who(entry.target_id);
  // An owner giving themselves a role or a nickname is common; "Freya gave Freya the role" reads as a glitch.
  const toSelf = entry.target_type === "user" && !!entry.actor_id && entry.actor_id === entry.target_id;
  const self = yes(toSelf);
  const roomOf = (id: unknown, fallback?: unknown): string => {
    const known = str(id) ? names.room(String(id)) : null;
    const name = known ?? str(fallback);
    return name ? `#${name}` : t("audit.value.deletedRoom");
  };
  const roleOf = (id: unknown, fallback?: unknown): string => {
    const known = str(id) ? names.role(String(id)) : null;
    const name = known ?? str(fallback);
    return name ? quote(name) : t("audit.value.deletedRole");
  };
  const when = (iso: unknown): string => {
    const text = str(iso);
    if (!text) return t("audit.value.later");
    return names.time ? names.time(text) : formatDate(text, "moment");
  };
  const name = str(data.name) ?? "";
  const named = yes(name);
  const code = str(data.code) ?? "";
  const coded = yes(code);
  const base = { actor, target, self, name, named, code, coded };

  switch (entry.action) {
    case "guild.create":
      return data.template_id ? t("audit.entry.guildCreateFromTemplate", base) : t("audit.entry.guildCreate", base);
    case "guild.update":
    case "instance.guild_update": {
      const parts = changes(data, GUILD_FIELDS, names);
      const by = entry.action === "instance.guild_update" ? t("audit.byInstance", { actor }) : actor;
      return parts.length ? t("audit.entry.guildUpdate", { actor: by, changes: list(parts.map((p) => p.full)) }) : t("audit.entry.guildUpdateNone", { actor: by });
    }
    case "guild.owner_transfer":
      return t("audit.entry.guildOwnerTransfer", base);
    case "guild.delete":
      return t("audit.entry.guildDelete", base);
    case "instance.guild_delete":
      return t("audit.entry.instanceGuildDelete", base);
    case "channel.create": {
      const kind = data.type === "category" ? "category" : data.type === "voice" ? "voice" : "text";
      const room = str(data.name) ?? names.room(entry.target_id ?? "") ?? "";
      return t("audit.entry.channelCreate", { ...base, kind, room });
    }
    case "channel.update": {
      const parts = changes(data, ROOM_FIELDS, names);
      const room = roomOf(entry.target_id);
      return parts.length
        ? t("audit.entry.channelUpdate", { ...base, room, changes: list(parts.map((p) => p.bare)) })
        : t("audit.entry.channelUpdateNone", { ...base, room });
    }
    case "channel.delete":
      return t("audit.entry.channelDelete", { ...base, room: roomOf(null, data.name) });
    case "channel.override_update":
    case "channel.override_delete": {
      const values = {
        ...base,
        kind: data.type === "member" ? "member" : "role",
        member: who(str(data.target_id)),
        role: roleOf(data.target_id),
        room: roomOf(entry.target_id),
      };
      return entry.action === "channel.override_update"
        ? t("audit.entry.channelOverrideUpdate", values)
        : t("audit.entry.channelOverrideDelete", values);
    }
    case "channel.background_update":
      return data.background_file_id
        ? t("audit.entry.channelBackgroundSet", { ...base, room: roomOf(entry.target_id) })
        : t("audit.entry.channelBackgroundRemove", { ...base, room: roomOf(entry.target_id) });
    case "role.create":
      return t("audit.entry.roleCreate", { ...base, role: roleOf(entry.target_id, data.name) });
    case "role.update": {
      const parts = changes(data, ROLE_FIELDS, names);
      const role = roleOf(entry.target_id);
      return parts.length
        ? t("audit.entry.roleUpdate", { ...base, role, changes: list(parts.map((p) => p.bare)) })
        : t("audit.entry.roleUpdateNone", { ...base, role });
    }
    case "role.delete":
      return t("audit.entry.roleDelete", { ...base, role: roleOf(null, data.name) });
    case "role.reorder":
      return t("audit.entry.roleReorder", base);
    case "member.nick_update": {
      const pair = (data.changes as Data | undefined)?.nick;
      const [before, after] = Array.isArray(pair) ? pair : [null, null];
      if (!after) return t("audit.entry.nickRemove", base);
      const values = { ...base, before: quoted(before), after: quoted(after) };
      return before ? t("audit.entry.nickChange", values) : t("audit.entry.nickSet", values);
    }
    case "member.role_add":
      return t("audit.entry.memberRoleAdd", { ...base, role: roleOf(data.role_id) });
    case "member.role_remove":
      return t("audit.entry.memberRoleRemove", { ...base, role: roleOf(data.role_id) });
    case "member.timeout":
      return t("audit.entry.memberTimeout", { ...base, time: when(data.timeout_until) });
    case "member.timeout_clear":
      return t("audit.entry.memberTimeoutClear", base);
    case "member.kick":
      return t("audit.entry.memberKick", base);
    case "member.ban":
      return t("audit.entry.memberBan", base);
    case "member.unban":
      return t("audit.entry.memberUnban", base);
    case "invite.create":
      return t("audit.entry.inviteCreate", { ...base, inRoom: yes(data.channel_id), room: data.channel_id ? roomOf(data.channel_id) : "" });
    case "invite.delete":
      return t("audit.entry.inviteDelete", base);
    case "invite.background_update":
      return data.background_file_id ? t("audit.entry.inviteBackgroundSet", base) : t("audit.entry.inviteBackgroundRemove", base);
    case "message.delete": {
      const author = str(data.author_id);
      return t("audit.entry.messageDelete", { ...base, byAuthor: yes(author), author: author ? who(author) : "", room: roomOf(data.channel_id) });
    }
    case "message.pin":
      return t("audit.entry.messagePin", { ...base, room: roomOf(data.channel_id) });
    case "message.unpin":
      return t("audit.entry.messageUnpin", { ...base, room: roomOf(data.channel_id) });
    case "emoji.create":
      return t("audit.entry.emojiCreate", base);
    case "emoji.update":
      return t("audit.entry.emojiUpdate", base);
    case "emoji.delete":
      return t("audit.entry.emojiDelete", base);
    case "sound.create":
      return t("audit.entry.soundCreate", base);
    case "sound.update":
      return t("audit.entry.soundUpdate", base);
    case "sound.delete":
      return t("audit.entry.soundDelete", base);
    case "cosmetic.create":
      return t("audit.entry.cosmeticCreate", base);
    case "cosmetic.update":
      return t("audit.entry.cosmeticUpdate", base);
    case "cosmetic.delete":
      return t("audit.entry.cosmeticDelete", base);
    case "webhook.create":
      return t("audit.entry.webhookCreate", base);
    case "webhook.update":
      return t("audit.entry.webhookUpdate", base);
    case "webhook.delete":
      return t("audit.entry.webhookDelete", base);
    case "webhook.token_reset":
      return t("audit.entry.webhookTokenReset", base);
    case "webhook.avatar_update":
      return t("audit.entry.webhookAvatarUpdate", base);
    case "voice.mute":
      return t("audit.entry.voiceMute", { ...base, on: yes(data.value !== false) });
    case "voice.deafen":
      return t("audit.entry.voiceDeafen", { ...base, on: yes(data.value !== false) });
    case "voice.move":
      return t("audit.entry.voiceMove", { ...base, from: roomOf(data.from_channel_id), to: roomOf(data.to_channel_id) });
    case "voice.disconnect":
      return t("audit.entry.voiceDisconnect", { ...base, inRoom: yes(data.from_channel_id), room: data.from_channel_id ? roomOf(data.from_channel_id) : "" });
    case "template.create":
      return t("audit.entry.templateCreate", { ...base, template: quoted(data.name) });
    case "limits.bypass":
      return t("audit.entry.limitsBypass", { ...base, room: roomOf(entry.target_id) });
    default:
      return t("audit.entry.unknown", { actor, action: entry.action });
  }
}
