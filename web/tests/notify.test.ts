import { describe, expect, it } from "vitest";
import {
  FOREVER, applySetting, effectiveLevel, emptySettings, forgetGuild, mutedWords, muteUntil, notificationFor, roomMuted,
  settingsFrom, tabTitle, type NotificationSettings,
} from "../src/lib/notify";
import { applyEvent, applyHistory, attentionCount, createState, isUnread, type State } from "../src/lib/state";
import type { Message } from "../src/lib/types";

const NOW = Date.parse("2026-03-01T12:00:00Z");
const LATER = "2026-03-01T13:00:00.000Z";
const EARLIER = "2026-03-01T11:00:00.000Z";
const ME = "1";
const author = { id: "2", username: "thor", display_name: "thor", avatar: null, bio: "", status: "online" as const,
  custom_status: null, custom_status_emoji: null, badges: [], created_at: "2025-01-01T00:00:00Z", deleted: false };

function msg(extra: Partial<{ guild_id: string | null; channel_id: string; mentions: string[]; mention_everyone: boolean; kind: "normal" | "system"; author: typeof author | null }> = {}) {
  return { channel_id: "100", guild_id: "10", author, kind: "normal" as const, mentions: [] as string[], mention_everyone: false, ...extra };
}

function settings(guild?: object, room?: object): NotificationSettings {
  return settingsFrom({
    guilds: guild ? [{ guild_id: "10", level: "mentions", muted_until: null, suppress_everyone: false, ...guild }] : [],
    channels: room ? [{ channel_id: "100", level: "default", muted_until: null, ...room }] : [],
  });
}

const room = { guildId: "10", channelId: "100" };
const conversation = { guildId: null, channelId: "100" };

describe("effective level", () => {
  it("defaults: a server's rooms only mentions, a conversation everything", () => {
    expect(effectiveLevel(emptySettings(), room, NOW)).toBe("mentions");
    expect(effectiveLevel(emptySettings(), conversation, NOW)).toBe("all");
  });

  it("is the room's own level unless default, else the server's", () => {
    expect(effectiveLevel(settings({ level: "all" }), room, NOW)).toBe("all");
    expect(effectiveLevel(settings({ level: "all" }, { level: "default" }), room, NOW)).toBe("all");
    expect(effectiveLevel(settings({ level: "all" }, { level: "nothing" }), room, NOW)).toBe("nothing");
    expect(effectiveLevel(settings({ level: "nothing" }, { level: "all" }), room, NOW)).toBe("all");
    expect(effectiveLevel(settings(undefined, { level: "mentions" }), conversation, NOW)).toBe("mentions");
  });

  it("counts a mute until a later time as nothing, an expired one not at all", () => {
    expect(effectiveLevel(settings(undefined, { level: "all", muted_until: LATER }), room, NOW)).toBe("nothing");
    expect(effectiveLevel(settings(undefined, { level: "all", muted_until: EARLIER }), room, NOW)).toBe("all");
    // A muted server silences its rooms, even one set to all.
    expect(effectiveLevel(settings({ level: "all", muted_until: LATER }, { level: "all" }), room, NOW)).toBe("nothing");
    expect(effectiveLevel(settings({ level: "all", muted_until: EARLIER }), room, NOW)).toBe("all");
    expect(effectiveLevel(settings(undefined, { level: "all", muted_until: FOREVER }), conversation, NOW)).toBe("nothing");
    expect(roomMuted(settings({ muted_until: LATER }), room, NOW)).toBe(true);
    expect(roomMuted(settings({ muted_until: EARLIER }), room, NOW)).toBe(false);
  });
});

describe("what a message is to the person", () => {
  it("mentions notify at the default level, plain messages do not", () => {
    const s = emptySettings();
    expect(notificationFor(s, msg({ mentions: [ME] }), ME, NOW)).toBe("mention");
    expect(notificationFor(s, msg(), ME, NOW)).toBeNull();
  });

  it("all lets every message through, nothing none (not even mentions)", () => {
    expect(notificationFor(settings({ level: "all" }), msg(), ME, NOW)).toBe("message");
    expect(notificationFor(settings({ level: "nothing" }), msg({ mentions: [ME] }), ME, NOW)).toBeNull();
    expect(notificationFor(settings(undefined, { level: "all", muted_until: LATER }), msg({ mentions: [ME] }), ME, NOW)).toBeNull();
  });

  it("@everyone is a mention unless the server suppresses it", () => {
    expect(notificationFor(emptySettings(), msg({ mention_everyone: true }), ME, NOW)).toBe("mention");
    expect(notificationFor(settings({ suppress_everyone: true }), msg({ mention_everyone: true }), ME, NOW)).toBeNull();
    expect(notificationFor(settings({ level: "all", suppress_everyone: true }), msg({ mention_everyone: true }), ME, NOW)).toBe("message");
  });

  it("conversations notify every message by default, and at mentions too", () => {
    expect(notificationFor(emptySettings(), msg({ guild_id: null }), ME, NOW)).toBe("message");
    const mentions = settingsFrom({ guilds: [], channels: [{ channel_id: "100", level: "mentions", muted_until: null }] });
    expect(notificationFor(mentions, msg({ guild_id: null }), ME, NOW)).toBe("message");
  });

  it("never one's own messages nor system messages", () => {
    expect(notificationFor(settings({ level: "all" }), msg({ author: { ...author, id: ME } }), ME, NOW)).toBeNull();
    expect(notificationFor(settings({ level: "all" }), msg({ kind: "system", author: null }), ME, NOW)).toBeNull();
  });
});

describe("settings kept current", () => {
  it("an update replaces the server's or the room's setting; leaving forgets both", () => {
    const s = emptySettings();
    applySetting(s, { guild_id: "10", level: "all", muted_until: null, suppress_everyone: true });
    applySetting(s, { channel_id: "100", level: "nothing", muted_until: null });
    expect(s.guilds["10"].suppress_everyone).toBe(true);
    expect(effectiveLevel(s, room, NOW)).toBe("nothing");
    applySetting(s, { channel_id: "100", level: "default", muted_until: null });
    expect(effectiveLevel(s, room, NOW)).toBe("all");
    forgetGuild(s, "10", ["100"]);
    expect(s).toEqual(emptySettings());
  });
});

describe("words", () => {
  it("the tab title carries the count", () => {
    expect(tabTitle("#general · Longhouse", 3)).toBe("(3) #general · Longhouse");
    expect(tabTitle("Meadhall", 0)).toBe("Meadhall");
    expect(tabTitle("Meadhall", 250)).toBe("(99+) Meadhall");
  });

  it("mutes end at a time, or never", () => {
    expect(muteUntil(15, NOW)).toBe("2026-03-01T12:15:00.000Z");
    expect(muteUntil(null, NOW)).toBe(FOREVER);
    expect(mutedWords(FOREVER, NOW)).toBe("Muted until you turn it back on");
    expect(mutedWords(LATER, NOW)).toMatch(/^Muted until /);
    expect(mutedWords(EARLIER, NOW)).toBe("");
  });
});

describe("unread rules", () => {
  const snowflake = (ms: number, seq = 0) => ((BigInt(ms) << 22n) + BigInt(seq)).toString();
  const created = 90_000_000_000;
  const roomId = snowflake(created, 1);

  const message = (id: string): Message => ({
    id, channel_id: roomId, guild_id: "10", author, webhook: null, content: "hi", kind: "normal", system_event: null,
    attachments: [], nonce: null, reply_to_id: null, referenced_message: null, mentions: [], reactions: [],
    pinned: false, created_at: "2026-03-01T12:00:00.000Z", edited_at: null,
  } as unknown as Message);

  function withRoom(lastMessageId: string | null): State {
    const s = createState();
    s.me = { id: ME } as State["me"];
    s.guilds["10"] = { id: "10", channels: [{ id: roomId, guild_id: "10", type: "text", last_message_id: lastMessageId }] } as unknown as State["guilds"][string];
    return s;
  }

  it("a room's creation notice leaves it read; the first real message makes it unread", () => {
    const notice = snowflake(created, 2);
    expect(isUnread(withRoom(notice), roomId, notice)).toBe(false);
    const later = snowflake(created + 60_000);
    expect(isUnread(withRoom(later), roomId, later)).toBe(true);
  });

  it("a seen message decides by its type, not by its time: a real message a moment after creation is unread", () => {
    const s = withRoom(null);
    const notice = snowflake(created, 2);
    const quick = snowflake(created + 300);
    const system = { type: "channel_create", user_id: "2", actor_id: null, via: null };
    applyEvent(s, "MESSAGE_CREATE", { ...message(notice), kind: "system", author: null, system_event: system });
    expect(isUnread(s, roomId, notice)).toBe(false);
    applyEvent(s, "MESSAGE_CREATE", message(quick));
    expect(s.guilds["10"].channels[0].last_message_id).toBe(quick);
    expect(isUnread(s, roomId, quick)).toBe(true); // within a second of the room, yet a real message

    // The same when only the room's history holds it (no event seen).
    const fresh = withRoom(quick);
    applyHistory(fresh, roomId, [message(quick)], false, false);
    expect(isUnread(fresh, roomId, quick)).toBe(true);
  });

  it("a conversation's first message is unread however soon it follows", () => {
    const s = withRoom(null);
    const first = snowflake(created, 5);
    s.conversations[roomId] = { id: roomId, last_message_id: first } as unknown as State["conversations"][string];
    expect(isUnread(s, roomId, first)).toBe(true);
  });

  it("the tab counts mentions and every-message rooms, never muted ones", () => {
    const later = snowflake(created + 60_000);
    const s = withRoom(later);
    expect(attentionCount(s, NOW)).toBe(0); // mentions only, none
    s.readStates[roomId] = { channel_id: roomId, last_read_message_id: null, mention_count: 2, updated_at: "" };
    expect(attentionCount(s, NOW)).toBe(2);
    applySetting(s.notificationSettings, { channel_id: roomId, level: "all", muted_until: LATER });
    expect(attentionCount(s, NOW)).toBe(0);
    applySetting(s.notificationSettings, { channel_id: roomId, level: "all", muted_until: null });
    s.readStates[roomId].mention_count = 0;
    expect(attentionCount(s, NOW)).toBe(1);
  });
});
