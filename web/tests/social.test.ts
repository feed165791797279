// The social reducers (docs/social.md): READY relationships and presences, RELATIONSHIP_ADD/REMOVE,
// PRESENCE_UPDATE reaching friends and conversations, DM_CHANNEL_* and the conversation list's order.
import { describe, expect, it } from "vitest";
import { ApiError } from "../src/lib/api";
import { refusal } from "../src/lib/socialWords";
import {
  applyEvent,
  conversationName,
  createState,
  directWith,
  groupOwner,
  isUnread,
  relationshipsOf,
  relationshipWith,
  sortedConversations,
  type State,
} from "../src/lib/state";
import type { Conversation, Message, Ready, Relationship, RelationshipType, UserSummary } from "../src/lib/types";

const user = (id: string, name = `user${id}`, status: UserSummary["status"] = "offline"): UserSummary => ({
  id, username: name, display_name: name, avatar: null, bio: "", status, custom_status: null,
  custom_status_emoji: null, badges: [], created_at: "2025-01-01T00:00:00.000Z", deleted: false,
});

const rel = (id: string, type: RelationshipType, name = `user${id}`): Relationship => ({
  id, type, user: user(id, name), since: "2025-01-01T00:00:00.000Z", style: null,
});

const me = user("1", "me", "online");

const direct = (id: string, other: UserSummary, last: string | null = null): Conversation => ({
  id, type: "dm", guild_id: null, is_group: false, name: null, icon_file_id: null, owner_id: null, dm_owner_id: null, member_count: 2,
  members: [me, other], counterpart: other, avatar: other.avatar, status: other.status, last_message: null,
  last_message_id: last, created_at: "",
});

const group = (id: string, members: UserSummary[], extra: Partial<Conversation> = {}): Conversation => ({
  id, type: "dm", guild_id: null, is_group: true, name: null, icon_file_id: null, owner_id: "1", dm_owner_id: "1",
  member_count: members.length, members, counterpart: null, avatar: null, status: null, last_message: null,
  last_message_id: null, created_at: "", ...extra,
});

const message = (id: string, channel: string, author = "2"): Message => ({
  id, channel_id: channel, guild_id: null, author: user(author), webhook: null, content: `m${id}`, kind: "normal",
  system_event: null, attachments: [], nonce: null, reply_to_id: null, referenced_message: null, mentions: [],
  recipient_id: null, attachment_ids: [], mention_channels: [], mention_everyone: false, suppress_embeds: false, reactions: [], pinned: false, created_at: "2025-01-01T00:00:00.000Z", edited_at: null,
});

function ready(extra: Partial<Ready> = {}): State {
  const s = createState();
  applyEvent(s, "READY", {
    v: 1, session_id: "gs", user: { ...me, email: "me@x", status: "online", totp_enabled: false, is_instance_admin: false, locale: "en", timezone: "UTC", onboarding_completed_at: null, last_seen_at: null, password_reset_required: false },
    guilds: [], dm_channels: [], read_states: [], ...extra,
  } satisfies Ready);
  return s;
}

describe("relationships", () => {
  it("READY fills the four lists and the friends' presences", () => {
    const s = ready({
      relationships: { friends: [rel("2", "friend", "thor")], incoming: [rel("3", "incoming")], outgoing: [rel("4", "outgoing")], blocked: [rel("5", "blocked")] },
      presences: [{ user: user("2", "thor", "idle"), style: null }],
    });
    expect(relationshipWith(s, "2")).toBe("friend");
    expect(relationshipWith(s, "3")).toBe("incoming");
    expect(relationshipWith(s, "4")).toBe("outgoing");
    expect(relationshipWith(s, "5")).toBe("blocked");
    expect(relationshipWith(s, "6")).toBeNull();
    expect(s.relationships["2"].user.status).toBe("idle");
    expect(s.users["2"].status).toBe("idle");
  });

  it("a new READY forgets relationships that ended meanwhile", () => {
    const s = ready({ relationships: { friends: [rel("2", "friend")], incoming: [], outgoing: [], blocked: [] } });
    applyEvent(s, "READY", { v: 1, session_id: "gs2", user: s.me!, guilds: [], dm_channels: [], read_states: [],
      relationships: { friends: [], incoming: [], outgoing: [], blocked: [] } });
    expect(relationshipWith(s, "2")).toBeNull();
  });

  it("RELATIONSHIP_ADD adds or changes the type; lists are sorted by name", () => {
    const s = ready();
    applyEvent(s, "RELATIONSHIP_ADD", rel("3", "incoming", "sif"));
    applyEvent(s, "RELATIONSHIP_ADD", rel("2", "outgoing", "bjorn"));
    expect(relationshipsOf(s, "incoming").map((r) => r.id)).toEqual(["3"]);
    applyEvent(s, "RELATIONSHIP_ADD", rel("3", "friend", "sif"));
    applyEvent(s, "RELATIONSHIP_ADD", rel("2", "friend", "bjorn"));
    expect(relationshipsOf(s, "incoming")).toEqual([]);
    expect(relationshipsOf(s, "friend").map((r) => r.user.display_name)).toEqual(["bjorn", "sif"]);
  });

  it("RELATIONSHIP_REMOVE removes only the type it names", () => {
    const s = ready();
    applyEvent(s, "RELATIONSHIP_ADD", rel("2", "blocked"));
    // A late removal of the friendship the block replaced leaves the block alone.
    applyEvent(s, "RELATIONSHIP_REMOVE", { id: "2", type: "friend" });
    expect(relationshipWith(s, "2")).toBe("blocked");
    applyEvent(s, "RELATIONSHIP_REMOVE", { id: "2", type: "blocked" });
    expect(relationshipWith(s, "2")).toBeNull();
    applyEvent(s, "RELATIONSHIP_REMOVE", { id: "9", type: "friend" }); // unknown: nothing happens
    expect(s.relationships).toEqual({});
  });
});

describe("presence", () => {
  it("PRESENCE_UPDATE reaches the friend, the 1:1's counterpart and every group showing them", () => {
    const thor = user("2", "thor");
    const s = ready({
      relationships: { friends: [rel("2", "friend", "thor")], incoming: [], outgoing: [], blocked: [] },
      dm_channels: [direct("50", thor), group("60", [me, thor, user("3")])],
    });
    applyEvent(s, "PRESENCE_UPDATE", { user: { ...thor, status: "dnd", custom_status: "raiding" }, style: null });
    expect(s.relationships["2"].user.status).toBe("dnd");
    expect(s.conversations["50"].counterpart?.status).toBe("dnd");
    expect(s.conversations["50"].status).toBe("dnd");
    expect(s.conversations["60"].members[1].custom_status).toBe("raiding");
    expect(s.conversations["60"].members[2].status).toBe("offline");
  });
});

describe("conversations", () => {
  it("are listed by last activity (the newest message, else the creation)", () => {
    const s = ready({ dm_channels: [direct("50", user("2"), "70"), direct("51", user("3")), direct("55", user("4"), "58")] });
    expect(sortedConversations(s).map((c) => c.id)).toEqual(["50", "55", "51"]);
    applyEvent(s, "MESSAGE_CREATE", message("80", "51", "3"));
    expect(sortedConversations(s).map((c) => c.id)).toEqual(["51", "50", "55"]);
    expect(s.conversations["51"].last_message?.content).toBe("m80");
    expect(isUnread(s, "51", s.conversations["51"].last_message_id)).toBe(true);
    applyEvent(s, "MESSAGE_CREATE", message("81", "51", "1"));
    expect(isUnread(s, "51", s.conversations["51"].last_message_id)).toBe(false);
  });

  it("DM_CHANNEL_CREATE, UPDATE (a 1:1 becoming a group) and DELETE", () => {
    const thor = user("2", "thor");
    const s = ready();
    applyEvent(s, "DM_CHANNEL_CREATE", direct("50", thor));
    expect(directWith(s, "2")?.id).toBe("50");
    expect(conversationName(s, s.conversations["50"])).toBe("thor");
    applyEvent(s, "DM_CHANNEL_UPDATE", group("50", [me, thor, user("3", "sif")], { name: "me, thor, sif", dm_owner_id: "2", owner_id: "2" }));
    expect(directWith(s, "2")).toBeUndefined();
    expect(conversationName(s, s.conversations["50"])).toBe("me, thor, sif");
    expect(groupOwner(s.conversations["50"])).toBe("2");
    expect(s.users["3"].display_name).toBe("sif");
    applyEvent(s, "DM_CHANNEL_DELETE", { id: "50" });
    expect(s.conversations["50"]).toBeUndefined();
  });

  it("an update carrying an older last message keeps the newer one already shown", () => {
    const s = ready({ dm_channels: [group("60", [me, user("2"), user("3")])] });
    applyEvent(s, "MESSAGE_CREATE", message("90", "60"));
    applyEvent(s, "DM_CHANNEL_UPDATE", group("60", [me, user("2"), user("3")], { name: "Crew", last_message_id: "85" }));
    expect(s.conversations["60"].name).toBe("Crew");
    expect(s.conversations["60"].last_message_id).toBe("90");
  });

  it("a group without a name is named after the others", () => {
    const s = ready();
    const c = group("60", [me, user("2", "thor"), user("3", "sif")]);
    expect(conversationName(s, c)).toBe("thor, sif");
  });
});

describe("refusals in words", () => {
  const err = (status: number, code: string, details?: { field: string; message: string }[]) =>
    new ApiError(status, { code, message: "generic", details });

  it("says what went wrong when adding a friend", () => {
    expect(refusal(err(404, "user.not_found"), "add-friend", "nobody")).toContain("Nobody here is called “nobody”");
    expect(refusal(err(403, "relationship.blocked"), "add-friend", "thor")).toContain("one of you has blocked the other");
    expect(refusal(err(409, "relationship.already_exists"), "add-friend", "thor")).toContain("already friends with “thor”");
    expect(refusal(err(422, "validation.failed", [{ field: "username", message: "cannot be your own username" }]), "add-friend", "me"))
      .toContain("your own username");
  });

  it("names the group rules", () => {
    expect(refusal(err(403, "perm.denied"), "rename")).toBe("Only the owner of the group can do this.");
    expect(refusal(err(409, "dm.full"), "add-recipient", "sif")).toContain("at most 10");
    expect(refusal(err(403, "relationship.blocked"), "send")).toContain("cannot be sent");
    expect(refusal(err(500, "internal"), "open")).toBe("generic");
    expect(refusal(new Error("offline"), "open")).toBe("offline");
  });
});
