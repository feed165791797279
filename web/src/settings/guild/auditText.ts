// The server's audit log in words (OpenAPI: listAuditLog; the actions a server's log holds are those of
// the service's audit catalogue scoped to a guild): a label per action for the filter, and a sentence per
// entry naming who did what to whom ("thor kicked loki", "freya changed the server name from A to B").

import type { AuditEntry } from "../../lib/types";

/** Every action the service writes into a server's audit log, with a label for the filter. */
export const GUILD_AUDIT_ACTIONS: readonly { action: string; label: string }[] = [
  { action: "guild.create", label: "Server created" },
  { action: "guild.update", label: "Server changed" },
  { action: "guild.owner_transfer", label: "Ownership transferred" },
  { action: "guild.delete", label: "Server deleted" },
  { action: "channel.create", label: "Room created" },
  { action: "channel.update", label: "Room changed" },
  { action: "channel.delete", label: "Room deleted" },
  { action: "channel.override_update", label: "Room permissions changed" },
  { action: "channel.override_delete", label: "Room permissions removed" },
  { action: "channel.background_update", label: "Room background changed" },
  { action: "role.create", label: "Role created" },
  { action: "role.update", label: "Role changed" },
  { action: "role.delete", label: "Role deleted" },
  { action: "role.reorder", label: "Roles reordered" },
  { action: "member.nick_update", label: "Nickname changed" },
  { action: "member.role_add", label: "Role given" },
  { action: "member.role_remove", label: "Role taken" },
  { action: "member.timeout", label: "Member timed out" },
  { action: "member.timeout_clear", label: "Timeout removed" },
  { action: "member.kick", label: "Member kicked" },
  { action: "member.ban", label: "Member banned" },
  { action: "member.unban", label: "Member unbanned" },
  { action: "invite.create", label: "Invitation created" },
  { action: "invite.delete", label: "Invitation deleted" },
  { action: "invite.background_update", label: "Invitation background changed" },
  { action: "message.delete", label: "Message deleted" },
  { action: "message.pin", label: "Message pinned" },
  { action: "message.unpin", label: "Message unpinned" },
  { action: "emoji.create", label: "Emoji added" },
  { action: "emoji.update", label: "Emoji changed" },
  { action: "emoji.delete", label: "Emoji deleted" },
  { action: "sound.create", label: "Sound added" },
  { action: "sound.update", label: "Sound changed" },
  { action: "sound.delete", label: "Sound deleted" },
  { action: "cosmetic.create", label: "Gallery item added" },
  { action: "cosmetic.update", label: "Gallery item changed" },
  { action: "cosmetic.delete", label: "Gallery item deleted" },
  { action: "webhook.create", label: "Webhook created" },
  { action: "webhook.update", label: "Webhook changed" },
  { action: "webhook.delete", label: "Webhook deleted" },
  { action: "webhook.token_reset", label: "Webhook token reset" },
  { action: "webhook.avatar_update", label: "Webhook avatar changed" },
  { action: "voice.mute", label: "Voice mute" },
  { action: "voice.deafen", label: "Voice deafen" },
  { action: "voice.move", label: "Moved in voice" },
  { action: "voice.disconnect", label: "Disconnected from voice" },
  { action: "template.create", label: "Template saved" },
  { action: "instance.guild_update", label: "Changed by the instance administration" },
  { action: "instance.guild_delete", label: "Deleted by the instance administration" },
  { action: "limits.bypass", label: "Message limit bypassed" },
];

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

function quoted(v: unknown): string {
  if (v === null || v === undefined || v === "") return "nothing";
  if (typeof v === "boolean") return v ? "yes" : "no";
  return `“${String(v)}”`;
}

const GUILD_FIELDS: Record<string, string> = {
  name: "the server name",
  description: "the description",
  system_channel_id: "the room for system messages",
  owner_id: "the owner",
  public: "the public listing",
  icon_file_id: "the icon",
  banner_file_id: "the banner",
  splash_file_id: "the splash image",
};

const ROOM_FIELDS: Record<string, string> = {
  name: "the name",
  topic: "the topic",
  parent_id: "the category",
  position: "the position",
  slowmode_seconds: "the slow mode (seconds)",
  user_limit: "the user limit",
};

const ROLE_FIELDS: Record<string, string> = {
  name: "the name",
  color: "the colour",
  permissions: "the permissions",
  hoist: "the separate listing",
  frame_id: "the frame",
  icon_id: "the icon",
};

/** One change of a `data.changes` map in words: "the server name from “A” to “B”". */
function change(field: string, pair: unknown, labels: Record<string, string>, names: Names): string {
  const label = labels[field] ?? field.replace(/_/g, " ");
  const [before, after] = Array.isArray(pair) ? pair : [undefined, pair];
  if (field.endsWith("_file_id") || field === "frame_id" || field === "icon_id") {
    if (after === null || after === undefined) return `removed ${label}`;
    return before ? `replaced ${label}` : `set ${label}`;
  }
  if (field === "public") return after ? "listed the server as public" : "made the server private";
  if (field === "permissions") return `changed ${label}`;
  const word = (v: unknown): string => {
    if (field === "system_channel_id" || field === "parent_id") {
      const id = str(v);
      if (!id) return "none";
      const room = names.room(id);
      return room ? (field === "parent_id" ? `“${room}”` : `#${room}`) : "a deleted room";
    }
    if (field === "owner_id") {
      const id = str(v);
      return id ? names.user(id) ?? "someone" : "nobody";
    }
    if (field === "color" && typeof v === "number") return v ? `#${v.toString(16).padStart(6, "0")}` : "no colour";
    return quoted(v);
  };
  return `changed ${label} from ${word(before)} to ${word(after)}`;
}

function changes(data: Data, labels: Record<string, string>, names: Names): string[] {
  const map = data.changes;
  if (!map || typeof map !== "object") return [];
  // The public invitation's code follows the public flag, which is worded already.
  return Object.entries(map as Data)
    .filter(([field]) => field !== "public_invite_code" && field !== "name_norm")
    .map(([field, pair]) => change(field, pair, labels, names));
}

function list(parts: string[]): string {
  if (parts.length <= 1) return parts[0] ?? "";
  return `${parts.slice(0, -1).join(", ")} and ${parts[parts.length - 1]}`;
}

/** The sentence of one entry, without its reason (shown next to it). */
export function describeEntry(entry: AuditEntry, names: Names): string {
  const data: Data = entry.data ?? {};
  const actor = entry.actor?.display_name ?? (entry.actor_id ? names.user(entry.actor_id) : null) ?? "The system";
  const who = (id: string | null | undefined): string => (id ? names.user(id) ?? "a former member" : "someone");
  const target = who(entry.target_id);
  // An owner giving themselves a role or a nickname is common; "Freya gave Freya the role" reads as a glitch.
  const toSelf = entry.target_type === "user" && !!entry.actor_id && entry.actor_id === entry.target_id;
  const roomOf = (id: unknown, fallback?: unknown): string => {
    const known = str(id) ? names.room(String(id)) : null;
    const name = known ?? str(fallback);
    return name ? `#${name}` : "a deleted room";
  };
  const roleOf = (id: unknown, fallback?: unknown): string => {
    const known = str(id) ? names.role(String(id)) : null;
    const name = known ?? str(fallback);
    return name ? `“${name}”` : "a deleted role";
  };
  const when = (iso: unknown): string => {
    const text = str(iso);
    if (!text) return "later";
    return names.time ? names.time(text) : new Date(text).toLocaleString();
  };
  const named = (kind: string, article = "a"): string => (str(data.name) ? `the ${kind} “${str(data.name)}”` : `${article} ${kind}`);
  const code = str(data.code) ? `the invitation ${str(data.code)}` : "an invitation";

  switch (entry.action) {
    case "guild.create":
      return data.template_id ? `${actor} created the server from a template` : `${actor} created the server`;
    case "guild.update":
    case "instance.guild_update": {
      const parts = changes(data, GUILD_FIELDS, names);
      const by = entry.action === "instance.guild_update" ? `${actor} (instance administration)` : actor;
      return parts.length ? `${by} ${list(parts)}` : `${by} changed the server`;
    }
    case "guild.owner_transfer":
      return `${actor} gave the ownership of the server to ${target}`;
    case "guild.delete":
      return `${actor} deleted the server`;
    case "instance.guild_delete":
      return `${actor} (instance administration) deleted the server`;
    case "channel.create": {
      const kind = data.type === "category" ? "the category" : data.type === "voice" ? "the voice room" : "the room";
      const name = str(data.name) ?? names.room(entry.target_id ?? "") ?? "";
      return `${actor} created ${kind} ${data.type === "category" ? `“${name}”` : `#${name}`}`;
    }
    case "channel.update": {
      const parts = changes(data, ROOM_FIELDS, names);
      const room = roomOf(entry.target_id);
      return parts.length ? `${actor} changed ${room}: ${list(parts.map((p) => p.replace(/^changed /, "")))}` : `${actor} changed ${room}`;
    }
    case "channel.delete":
      return `${actor} deleted the room ${roomOf(null, data.name)}`;
    case "channel.override_update":
    case "channel.override_delete": {
      const subject = data.type === "member" ? who(str(data.target_id)) : `the role ${roleOf(data.target_id)}`;
      const room = roomOf(entry.target_id);
      return entry.action === "channel.override_update"
        ? `${actor} changed the permissions of ${subject} in ${room}`
        : `${actor} removed the permission override of ${subject} in ${room}`;
    }
    case "channel.background_update":
      return data.background_file_id
        ? `${actor} set the background of ${roomOf(entry.target_id)}`
        : `${actor} removed the background of ${roomOf(entry.target_id)}`;
    case "role.create":
      return `${actor} created the role ${roleOf(entry.target_id, data.name)}`;
    case "role.update": {
      const parts = changes(data, ROLE_FIELDS, names);
      const role = roleOf(entry.target_id);
      return parts.length ? `${actor} changed the role ${role}: ${list(parts.map((p) => p.replace(/^changed /, "")))}` : `${actor} changed the role ${role}`;
    }
    case "role.delete":
      return `${actor} deleted the role ${roleOf(null, data.name)}`;
    case "role.reorder":
      return `${actor} reordered the roles`;
    case "member.nick_update": {
      const pair = (data.changes as Data | undefined)?.nick;
      const [before, after] = Array.isArray(pair) ? pair : [null, null];
      const whose = toSelf ? "their nickname" : `the nickname of ${target}`;
      if (!after) return `${actor} removed ${whose}`;
      return before ? `${actor} changed ${whose} from ${quoted(before)} to ${quoted(after)}` : `${actor} set ${whose} to ${quoted(after)}`;
    }
    case "member.role_add":
      return `${actor} gave ${toSelf ? "themselves" : target} the role ${roleOf(data.role_id)}`;
    case "member.role_remove":
      return toSelf ? `${actor} gave up the role ${roleOf(data.role_id)}` : `${actor} took the role ${roleOf(data.role_id)} from ${target}`;
    case "member.timeout":
      return `${actor} timed out ${target} until ${when(data.timeout_until)}`;
    case "member.timeout_clear":
      return `${actor} removed the timeout of ${target}`;
    case "member.kick":
      return `${actor} kicked ${target}`;
    case "member.ban":
      return `${actor} banned ${target}`;
    case "member.unban":
      return `${actor} unbanned ${target}`;
    case "invite.create": {
      const room = data.channel_id ? ` for ${roomOf(data.channel_id)}` : "";
      return `${actor} created ${code}${room}`;
    }
    case "invite.delete":
      return `${actor} deleted ${code}`;
    case "invite.background_update":
      return data.background_file_id ? `${actor} set the background of ${code}` : `${actor} removed the background of ${code}`;
    case "message.delete": {
      const author = str(data.author_id) ? ` by ${who(str(data.author_id))}` : "";
      return `${actor} deleted a message${author} in ${roomOf(data.channel_id)}`;
    }
    case "message.pin":
      return `${actor} pinned a message in ${roomOf(data.channel_id)}`;
    case "message.unpin":
      return `${actor} unpinned a message in ${roomOf(data.channel_id)}`;
    case "emoji.create":
      return `${actor} added ${named("emoji", "an")}`;
    case "emoji.update":
      return `${actor} changed ${named("emoji", "an")}`;
    case "emoji.delete":
      return `${actor} deleted ${named("emoji", "an")}`;
    case "sound.create":
      return `${actor} added ${named("sound")}`;
    case "sound.update":
      return `${actor} changed ${named("sound")}`;
    case "sound.delete":
      return `${actor} deleted ${named("sound")}`;
    case "cosmetic.create":
      return `${actor} added ${str(data.name) ? `“${str(data.name)}”` : "an item"} to the gallery`;
    case "cosmetic.update":
      return `${actor} changed ${str(data.name) ? `“${str(data.name)}”` : "an item"} of the gallery`;
    case "cosmetic.delete":
      return `${actor} removed ${str(data.name) ? `“${str(data.name)}”` : "an item"} from the gallery`;
    case "webhook.create":
      return `${actor} created ${named("webhook")}`;
    case "webhook.update":
      return `${actor} changed ${named("webhook")}`;
    case "webhook.delete":
      return `${actor} deleted ${named("webhook")}`;
    case "webhook.token_reset":
      return `${actor} reset the token of ${named("webhook")}`;
    case "webhook.avatar_update":
      return `${actor} changed the avatar of ${named("webhook")}`;
    case "voice.mute":
      return data.value === false ? `${actor} unmuted ${target} in voice` : `${actor} muted ${target} in voice`;
    case "voice.deafen":
      return data.value === false ? `${actor} undeafened ${target} in voice` : `${actor} deafened ${target} in voice`;
    case "voice.move":
      return `${actor} moved ${target} from ${roomOf(data.from_channel_id)} to ${roomOf(data.to_channel_id)}`;
    case "voice.disconnect":
      return `${actor} disconnected ${target} from ${data.from_channel_id ? roomOf(data.from_channel_id) : "voice"}`;
    case "template.create":
      return `${actor} saved the server as the template ${quoted(data.name)}`;
    case "limits.bypass":
      return `${actor} went past a message limit in ${roomOf(entry.target_id)}`;
    default:
      return `${actor}: ${entry.action}`;
  }
}
