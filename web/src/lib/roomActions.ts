// What the room menu, the server menu and the notification settings dialog do (docs/client.md, "Room and
// server menus"): notification settings saved whole (PUT, OpenAPI setGuildNotificationSettings /
// setChannelNotificationSettings) and applied at once as NOTIFICATION_SETTINGS_UPDATE would, and marking
// a room read up to its newest message (ackChannel).

import { call } from "./api";
import {
  applySetting, channelSetting, guildSetting, type ChannelNotificationSetting, type GuildNotificationSetting,
} from "./notify";
import { store } from "./store.svelte";
import type { Id } from "./types";

/** Replaces the person's setting of a server by the current one with `change` applied. */
export async function saveGuildSetting(guildId: Id, change: Partial<Omit<GuildNotificationSetting, "guild_id">>): Promise<void> {
  const { guild_id: _id, ...current } = guildSetting(store.notificationSettings, guildId);
  const { setting } = await call("setGuildNotificationSettings", { path: { guild_id: guildId }, body: { ...current, ...change } });
  applySetting(store.notificationSettings, setting);
}

/** Replaces the person's setting of a room or conversation by the current one with `change` applied. */
export async function saveChannelSetting(channelId: Id, inGuild: boolean,
  change: Partial<Omit<ChannelNotificationSetting, "channel_id">>): Promise<void> {
  const { channel_id: _id, ...current } = channelSetting(store.notificationSettings, channelId, inGuild);
  const { setting } = await call("setChannelNotificationSettings", { path: { channel_id: channelId }, body: { ...current, ...change } });
  applySetting(store.notificationSettings, setting);
}

/** "Mark as read": the read mark moves to the room's newest message and its mentions are cleared. */
export async function markRead(channelId: Id, lastMessageId: Id | null): Promise<void> {
  if (!lastMessageId) return;
  const { read_state } = await call("ackChannel", { path: { channel_id: channelId }, body: { message_id: lastMessageId } });
  store.readStates[channelId] = read_state;
}
