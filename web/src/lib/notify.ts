// Notification levels on the client side (docs/client.md, "Notification levels"): the person's settings per
// server and per room as READY and NOTIFICATION_SETTINGS_UPDATE carry them, and the rules the service's Web
// Push follows too: the effective level of a room is its own unless `default`, else its server's; a room or
// server muted until a future time counts as `nothing` until then (a muted server silences every room of it); conversations default to `all`; `mentions`
// lets through mentions of the person, `@everyone` unless the server suppresses it, and every message of a
// conversation. Pure functions over plain data, unit-tested in web/tests/notify.test.ts.

import type { Id, Message } from "./types";
import { t } from "../i18n/index.svelte";
import { dayKey, formatDate } from "../i18n/format";

export type Level = "all" | "mentions" | "nothing";
export type RoomLevel = Level | "default";

export interface GuildNotificationSetting {
  guild_id: Id;
  level: Level;
  muted_until: string | null;
  suppress_everyone: boolean;
}

export interface ChannelNotificationSetting {
  channel_id: Id;
  level: RoomLevel;
  muted_until: string | null;
}

/** As GET /users/@me/notification-settings and READY `notification_settings` carry them (only non-defaults). */
export interface NotificationSettingsList {
  guilds: GuildNotificationSetting[];
  channels: ChannelNotificationSetting[];
}

/** The settings by id, as the store keeps them. */
export interface NotificationSettings {
  guilds: Record<Id, GuildNotificationSetting>;
  channels: Record<Id, ChannelNotificationSetting>;
}

export const GUILD_DEFAULT: Omit<GuildNotificationSetting, "guild_id"> = { level: "mentions", muted_until: null, suppress_everyone: false };

export function emptySettings(): NotificationSettings {
  return { guilds: {}, channels: {} };
}

export function settingsFrom(list: NotificationSettingsList | null | undefined): NotificationSettings {
  const s = emptySettings();
  for (const g of list?.guilds ?? []) s.guilds[g.guild_id] = g;
  for (const c of list?.channels ?? []) s.channels[c.channel_id] = c;
  return s;
}

/** NOTIFICATION_SETTINGS_UPDATE (and a PUT's answer): the changed setting replaces the one of its server or room. */
export function applySetting(s: NotificationSettings, d: GuildNotificationSetting | ChannelNotificationSetting): void {
  if ("channel_id" in d) s.channels[d.channel_id] = d;
  else s.guilds[d.guild_id] = d;
}

/** Leaving a server forgets its setting and its rooms' (the service deletes them too). */
export function forgetGuild(s: NotificationSettings, guildId: Id, channelIds: Id[]): void {
  delete s.guilds[guildId];
  for (const id of channelIds) delete s.channels[id];
}

export function guildSetting(s: NotificationSettings, guildId: Id): GuildNotificationSetting {
  return s.guilds[guildId] ?? { guild_id: guildId, ...GUILD_DEFAULT };
}

/** A room's own setting; a conversation's default is `all`, a server room's `default`. */
export function channelSetting(s: NotificationSettings, channelId: Id, inGuild: boolean): ChannelNotificationSetting {
  return s.channels[channelId] ?? { channel_id: channelId, level: inGuild ? "default" : "all", muted_until: null };
}

export function isMuted(mutedUntil: string | null | undefined, now: number = Date.now()): boolean {
  return !!mutedUntil && Date.parse(mutedUntil) > now;
}

/** Where a message or room is: a server room (guildId set) or a conversation (guildId null). */
export interface Place {
  guildId: Id | null;
  channelId: Id;
}

/** The level that decides for a room or conversation now (mutes count as `nothing`). */
export function effectiveLevel(s: NotificationSettings, place: Place, now: number = Date.now()): Level {
  const room = channelSetting(s, place.channelId, place.guildId !== null);
  if (isMuted(room.muted_until, now)) return "nothing";
  if (place.guildId === null) return room.level === "default" ? "all" : room.level;
  // A muted server silences all its rooms, whatever their own level (as the service decides for Web Push).
  const guild = guildSetting(s, place.guildId);
  if (isMuted(guild.muted_until, now)) return "nothing";
  return room.level === "default" ? guild.level : room.level;
}

/** Whether the room itself, or its server, is muted now (the room list shows it quieter). */
export function roomMuted(s: NotificationSettings, place: Place, now: number = Date.now()): boolean {
  if (isMuted(channelSetting(s, place.channelId, place.guildId !== null).muted_until, now)) return true;
  return place.guildId !== null && isMuted(guildSetting(s, place.guildId).muted_until, now);
}

/** What a new message is to the person: a mention, a plain message worth a notification, or nothing. */
export function notificationFor(s: NotificationSettings, m: Pick<Message, "channel_id" | "guild_id" | "author" | "kind" | "mentions"> & { mention_everyone?: boolean },
  me: Id | null | undefined, now: number = Date.now()): "mention" | "message" | null {
  if (!me || m.kind === "system" || m.author?.id === me) return null;
  const level = effectiveLevel(s, { guildId: m.guild_id, channelId: m.channel_id }, now);
  if (level === "nothing") return null;
  const everyone = !!m.mention_everyone && !(m.guild_id && guildSetting(s, m.guild_id).suppress_everyone);
  if (m.mentions.includes(me) || everyone) return "mention";
  if (level === "all" || m.guild_id === null) return "message";
  return null;
}

/** The tab's title: the count of what waits in front, e.g. "(3) #general · Longhouse". */
export function tabTitle(title: string, count: number): string {
  return count > 0 ? `(${count > 99 ? "99+" : count}) ${title}` : title;
}

/** The mute choices of the menus and the dialog, in minutes (null: until turned back on). */
export const MUTE_CHOICES: { readonly label: string; minutes: number | null }[] = [
  { get label() { return t("shell.mute.minutes", { count: 15 }); }, minutes: 15 },
  { get label() { return t("shell.mute.hours", { count: 1 }); }, minutes: 60 },
  { get label() { return t("shell.mute.hours", { count: 8 }); }, minutes: 8 * 60 },
  { get label() { return t("shell.mute.hours", { count: 24 }); }, minutes: 24 * 60 },
  { get label() { return t("shell.mute.forever"); }, minutes: null },
];

/** "Until I turn it back on" is a time far ahead: the contract has a time or nothing. */
export const FOREVER = "3000-01-01T00:00:00.000Z";

export function muteUntil(minutes: number | null, now: number = Date.now()): string {
  return minutes === null ? FOREVER : new Date(now + minutes * 60_000).toISOString();
}

/** "Muted until 14:05", "Muted until Tue 09:00", "Muted": the time a mute ends, in words. */
export function mutedWords(mutedUntil: string | null, now: number = Date.now()): string {
  if (!isMuted(mutedUntil, now) || !mutedUntil) return "";
  const end = Date.parse(mutedUntil);
  if (end - now > 365 * 24 * 3600_000) return t("shell.muted.forever");
  const time = formatDate(end, "time");
  return dayKey(now) === dayKey(end) ? t("shell.muted.untilTime", { time }) : t("shell.muted.untilDay", { day: formatDate(end, "weekday"), time });
}
