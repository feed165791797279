// Desktop notifications while a tab is open (docs/client.md, "Notification levels"): a new message that the
// effective level lets through (lib/notify.ts), not one's own, shown with the browser's Notification API
// unless this tab is focused on that very room; a click focuses the tab and opens the room. The permission is
// asked only from a person's click (user settings → Notifications), never on load. The tab title's count
// comes from here too (`tabTitleFor`, used by screens/Shell.svelte).

import { attentionCount, conversationName, displayName, findChannel } from "./state";
import { navigate } from "./router.svelte";
import { clock, onDispatch, store } from "./store.svelte";
import { notificationFor, tabTitle } from "./notify";
import type { Message } from "./types";
import { t } from "../i18n/index.svelte";

/** The browser's permission as the settings show it (kept current after asking). */
export const desktop = $state({
  permission: (typeof Notification === "undefined" ? "unsupported" : Notification.permission) as NotificationPermission | "unsupported",
});

/** Asks for the permission (call it only from a click). */
export async function askPermission(): Promise<NotificationPermission | "unsupported"> {
  if (typeof Notification === "undefined") return "unsupported";
  desktop.permission = await Notification.requestPermission();
  return desktop.permission;
}

/** The title of the tab: "(3) #general · Longhouse". */
export function tabTitleFor(title: string): string {
  return tabTitle(title, attentionCount(store, clock.now));
}

function focusedOn(channelId: string): boolean {
  return document.visibilityState === "visible" && document.hasFocus() && location.pathname.endsWith(`/${channelId}`);
}

/** Message text for a notification: tokens as words, at most 180 characters. */
function plain(m: Message): string {
  const guildId = m.guild_id ?? undefined;
  let text = m.content
    .replace(/<@!?(\d+)>/g, (_t, id: string) => `@${displayName(store, id, guildId)}`)
    .replace(/<#(\d+)>/g, (_t, id: string) => `#${findChannel(store, id)?.name ?? t("shell.desktop.room")}`)
    .replace(/<a?:(\w+):\d+>/g, ":$1:");
  if (!text.trim() && m.attachments.length) text = m.attachments.length === 1 ? t("shell.desktop.sentFile", { name: m.attachments[0].original_name }) : t("shell.desktop.sentFiles", { count: m.attachments.length });
  return text.length > 180 ? `${text.slice(0, 179)}…` : text;
}

function titleOf(m: Message): string {
  const author = m.webhook?.name ?? (m.author ? displayName(store, m.author.id, m.guild_id ?? undefined) : t("shell.someone"));
  if (m.guild_id) {
    const room = findChannel(store, m.channel_id);
    const guild = store.guilds[m.guild_id];
    return t("shell.desktop.titleRoom", { author, room: room?.name ?? t("shell.desktop.room"), server: guild?.name ?? t("shell.desktop.server") });
  }
  const conversation = store.conversations[m.channel_id];
  return conversation?.is_group ? t("shell.desktop.titleGroup", { author, group: conversationName(store, conversation) }) : author;
}

function show(m: Message): void {
  const path = `/channels/${m.guild_id ?? "@me"}/${m.channel_id}`;
  const n = new Notification(titleOf(m), { body: plain(m), tag: `message-${m.id}` });
  n.onclick = () => {
    window.focus();
    navigate(path);
    n.close();
  };
}

onDispatch((type, data) => {
  if (type !== "MESSAGE_CREATE" || typeof Notification === "undefined") return;
  // Read each time: the person may have changed it in the browser's own settings meanwhile.
  desktop.permission = Notification.permission;
  if (desktop.permission !== "granted") return;
  const m = data as Message;
  if (!notificationFor(store.notificationSettings, m, store.me?.id)) return;
  if (focusedOn(m.channel_id)) return;
  try {
    show(m);
  } catch {
    // Some browsers allow notifications only from a service worker: then only Web Push notifies.
  }
});
