import { describe, expect, it } from "vitest";
import {
  applyEvent,
  applyHistory,
  createState,
  displayName,
  isUnread,
  roomTree,
  typingIn,
  TYPING_MS,
  type State,
} from "../src/lib/state";
import type { Channel, GuildSnapshot, Message, Ready, UserSummary } from "../src/lib/types";

const user = (id: string, name = `user${id}`): UserSummary => ({
  id, username: name, display_name: name, avatar: null, bio: "", status: "online", custom_status: null,
  custom_status_emoji: null, badges: [], created_at: "2025-01-01T00:00:00.000Z", deleted: false,
});

const room = (id: string, extra: Partial<Channel> = {}): Channel => ({
  id, type: "text", guild_id: "10", name: `room${id}`, topic: null, position: 0, parent_id: null,
  slowmode_seconds: 0, user_limit: null, background_file_id: null, icon_file_id: null, dm_owner_id: null, permission_overrides: [], last_message_id: null, created_at: "2025-01-01T00:00:00.000Z", ...extra,
});

const guild = (channels: Channel[]): GuildSnapshot => ({
  id: "10", name: "Hall", description: null, icon_file_id: null, banner_file_id: null, splash_file_id: null, public: false, public_invite_code: null, is_main: false, owner_id: "1", member_count: 1,
  system_channel_id: "100", created_at: "2025-01-01T00:00:00.000Z", roles: [], emojis: [], channels,
  member: { guild_id: "10", user: user("1", "me"), nick: null, roles: [], joined_at: "", timeout_until: null, style: null },
});

const message = (id: string, author = "2", extra: Partial<Message> = {}): Message => ({
  id, channel_id: "100", guild_id: "10", author: user(author), webhook: null, content: `m${id}`, kind: "normal",
  system_event: null, attachments: [], nonce: null, reply_to_id: null, referenced_message: null, mentions: [],
  recipient_id: null, attachment_ids: [], mention_channels: [], mention_everyone: false, suppress_embeds: false, reactions: [], pinned: false, created_at: "2025-01-01T00:00:00.000Z", edited_at: null, ...extra,
});

function readyState(): State {
  const s = createState();
  const ready: Ready = {
    v: 1, session_id: "gs", user: { ...user("1", "me"), email: "me@x", status: "online", totp_enabled: false, is_instance_admin: false, locale: "en", timezone: "UTC", onboarding_completed_at: null, last_seen_at: null, password_reset_required: false },
    guilds: [guild([room("100", { last_message_id: "5" }), room("101")])], dm_channels: [],
    read_states: [{ channel_id: "100", last_read_message_id: "5", mention_count: 0, updated_at: "" }],
  };
  applyEvent(s, "READY", ready);
  return s;
}

describe("store reducers", () => {
  it("READY fills guilds, members and read states", () => {
    const s = readyState();
    expect(s.guildOrder).toEqual(["10"]);
    expect(s.me?.id).toBe("1");
    expect(s.members["10"]["1"].user.display_name).toBe("me");
    expect(isUnread(s, "100", "5")).toBe(false);
  });

  it("a new message by someone else makes the room unread; one's own does not", () => {
    const s = readyState();
    applyEvent(s, "MESSAGE_CREATE", message("6"));
    expect(s.guilds["10"].channels[0].last_message_id).toBe("6");
    expect(isUnread(s, "100", "6")).toBe(true);
    applyEvent(s, "MESSAGE_CREATE", message("7", "1"));
    expect(isUnread(s, "100", "7")).toBe(false);
  });

  it("compares ids as numbers, not strings", () => {
    const s = readyState();
    s.readStates["100"].last_read_message_id = "9";
    expect(isUnread(s, "100", "10")).toBe(true);
  });

  it("history pages merge in id order without duplicates", () => {
    const s = readyState();
    applyHistory(s, "100", [message("30"), message("20")], true, false);
    applyHistory(s, "100", [message("19"), message("11")], false, true);
    applyEvent(s, "MESSAGE_CREATE", message("31"));
    applyEvent(s, "MESSAGE_CREATE", message("31")); // a replayed event is not doubled
    expect(s.messages["100"].items.map((m) => m.id)).toEqual(["11", "19", "20", "30", "31"]);
    expect(s.messages["100"].hasMore).toBe(false);
  });

  it("a fresh newest page that does not reach the cache drops the gap", () => {
    const s = readyState();
    applyHistory(s, "100", [message("2"), message("1")], false, false);
    applyHistory(s, "100", [message("90"), message("80")], true, false);
    expect(s.messages["100"].items.map((m) => m.id)).toEqual(["80", "90"]);
    expect(s.messages["100"].hasMore).toBe(true);
  });

  it("messages of rooms never opened are not kept, but still mark the room", () => {
    const s = readyState();
    applyEvent(s, "MESSAGE_CREATE", message("6", "2", { channel_id: "101" }));
    expect(s.messages["101"]).toBeUndefined();
    expect(isUnread(s, "101", s.guilds["10"].channels[1].last_message_id)).toBe(true);
  });

  it("edits and deletions apply", () => {
    const s = readyState();
    applyHistory(s, "100", [message("6")], false, false);
    applyEvent(s, "MESSAGE_UPDATE", message("6", "2", { content: "changed", edited_at: "x" }));
    expect(s.messages["100"].items[0].content).toBe("changed");
    applyEvent(s, "MESSAGE_DELETE", { id: "6", channel_id: "100", guild_id: "10" });
    expect(s.messages["100"].items).toEqual([]);
  });

  it("reactions count up and down, and an optimistic own reaction is not counted twice", () => {
    const s = readyState();
    applyHistory(s, "100", [message("6")], false, false);
    const d = { channel_id: "100", guild_id: "10", message_id: "6", emoji: "👍" };
    applyEvent(s, "MESSAGE_REACTION_ADD", { ...d, user_id: "1" });
    applyEvent(s, "MESSAGE_REACTION_ADD", { ...d, user_id: "1" });
    applyEvent(s, "MESSAGE_REACTION_ADD", { ...d, user_id: "2" });
    expect(s.messages["100"].items[0].reactions).toEqual([{ emoji: "👍", count: 2, me: true }]);
    applyEvent(s, "MESSAGE_REACTION_REMOVE", { ...d, user_id: "1" });
    applyEvent(s, "MESSAGE_REACTION_REMOVE", { ...d, user_id: "2" });
    expect(s.messages["100"].items[0].reactions).toEqual([]);
  });

  it("typing marks lapse after 10 s and end when that user's message arrives", () => {
    const s = readyState();
    applyEvent(s, "TYPING_START", { channel_id: "100", guild_id: "10", timestamp: "", user_id: "2" }, 1000);
    applyEvent(s, "TYPING_START", { channel_id: "100", guild_id: "10", timestamp: "", user_id: "1" }, 1000);
    expect(typingIn(s, "100", 1000)).toEqual(["2"]);
    expect(typingIn(s, "100", 1000 + TYPING_MS)).toEqual([]);
    applyEvent(s, "TYPING_START", { channel_id: "100", guild_id: "10", timestamp: "", user_id: "2" }, 5000);
    applyEvent(s, "MESSAGE_CREATE", message("8"));
    expect(typingIn(s, "100", 5001)).toEqual([]);
  });

  it("a pending message is replaced by the echo carrying its nonce", () => {
    const s = readyState();
    applyHistory(s, "100", [], false, false);
    s.messages["100"].items.push(message("pending:abc", "1", { nonce: "abc" }));
    applyEvent(s, "MESSAGE_CREATE", message("40", "1", { nonce: "abc" }));
    expect(s.messages["100"].items.map((m) => m.id)).toEqual(["40"]);
  });

  it("guilds come and go; rooms and members follow their events", () => {
    const s = readyState();
    applyEvent(s, "CHANNEL_CREATE", room("102"));
    expect(s.guilds["10"].channels.map((c) => c.id)).toContain("102");
    applyEvent(s, "CHANNEL_DELETE", room("102"));
    expect(s.guilds["10"].channels.map((c) => c.id)).not.toContain("102");
    applyEvent(s, "MEMBER_ADD", { guild_id: "10", user: user("2", "freya"), nick: "Fre", roles: [], joined_at: "", timeout_until: null, style: null });
    expect(displayName(s, "2", "10")).toBe("Fre");
    applyEvent(s, "PRESENCE_UPDATE", { user: { ...user("2", "freya"), status: "idle" }, style: null });
    expect(s.members["10"]["2"].user.status).toBe("idle");
    applyEvent(s, "MEMBER_REMOVE", { guild_id: "10", user: user("2") });
    expect(s.members["10"]["2"]).toBeUndefined();
    applyEvent(s, "GUILD_DELETE", { id: "10", reason: "left" });
    expect(s.guildOrder).toEqual([]);
  });

  it("READ_STATE_UPDATE from another device clears the unread mark", () => {
    const s = readyState();
    applyEvent(s, "MESSAGE_CREATE", message("6"));
    applyEvent(s, "READ_STATE_UPDATE", { channel_id: "100", last_read_message_id: "6", mention_count: 0, updated_at: "" });
    expect(isUnread(s, "100", "6")).toBe(false);
  });

  it("a mention counts on the room", () => {
    const s = readyState();
    applyEvent(s, "MESSAGE_CREATE", message("6", "2", { mentions: ["1"] }));
    expect(s.readStates["100"].mention_count).toBe(1);
  });

  it("rooms group under categories in position order", () => {
    const g = guild([
      room("1", { name: "b", position: 2 }),
      room("2", { name: "cat", type: "category", position: 0 }),
      room("3", { name: "a", position: 1, parent_id: "2" }),
      room("4", { name: "top", position: 0 }),
    ]);
    const tree = roomTree(g);
    expect(tree.map((t) => [t.category?.name ?? null, t.rooms.map((r) => r.name)])).toEqual([
      [null, ["top", "b"]],
      ["cat", ["a"]],
    ]);
  });
});
