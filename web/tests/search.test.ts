import { describe, expect, it } from "vitest";
import { activeFilter, completeFilter, parseSearch } from "../src/lib/searchQuery";
import { applyEvent, createState } from "../src/lib/state";

const rooms = [{ id: "1", name: "general" }, { id: "2", name: "Dev-Talk" }];
const people = [
  { id: "10", username: "alice", names: ["Alice Smith", "Ali"] },
  { id: "11", username: "bob", names: ["Robert"] },
];

describe("the server search box's filters", () => {
  it("takes `in: #room` and `from: @name` anywhere, with or without the space and the mark", () => {
    expect(parseSearch("release in: #general from: @alice", rooms, people))
      .toEqual({ q: "release", channelId: "1", authorId: "10", unknown: null });
    expect(parseSearch("from:@BOB notes in:dev-talk", rooms, people))
      .toEqual({ q: "notes", channelId: "2", authorId: "11", unknown: null });
    expect(parseSearch("  plans   for  today ", rooms, people))
      .toEqual({ q: "plans for today", channelId: null, authorId: null, unknown: null });
  });

  it("knows a person by username first, then by a display name or nickname without spaces", () => {
    expect(parseSearch("x from: @robert", rooms, people).authorId).toBe("11");
    expect(parseSearch("x from: @ali", rooms, people).authorId).toBe("10");
  });

  it("reports the first filter naming nobody known, and leaves a bare `in:` as a word", () => {
    expect(parseSearch("x in: #nowhere from: @zed", rooms, people).unknown).toBe("#nowhere");
    expect(parseSearch("x from: @zed", rooms, people)).toMatchObject({ q: "x", unknown: "@zed" });
    expect(parseSearch("log in:", rooms, people)).toMatchObject({ q: "log in:", channelId: null });
    expect(parseSearch("login:x", rooms, people).q).toBe("login:x"); // a filter starts a word
  });
});

describe("completion of a filter's name", () => {
  it("finds the filter the caret is in", () => {
    expect(activeFilter("hello in: #ge", 13)).toEqual({ kind: "in", start: 10, query: "ge" });
    expect(activeFilter("from:@", 6)).toEqual({ kind: "from", start: 5, query: "" });
    expect(activeFilter("from: al", 8)).toEqual({ kind: "from", start: 6, query: "al" });
    expect(activeFilter("from: @al done", 14)).toBeNull();
    expect(activeFilter("plain words", 11)).toBeNull();
  });

  it("puts the chosen name in with its mark and a space after it", () => {
    const text = "notes in: #ge";
    const active = activeFilter(text, text.length)!;
    expect(completeFilter(text, active, "general")).toEqual({ text: "notes in: #general ", caret: 19 });
    const mid = "from: @a hello";
    expect(completeFilter(mid, activeFilter(mid, 8)!, "alice")).toEqual({ text: "from: @alice hello", caret: 12 });
  });
});

describe("MESSAGE_DELETE_BULK", () => {
  it("removes those messages of that room from the loaded history, and nothing else", () => {
    const state = createState();
    const message = (id: string, channel: string) => ({ id, channel_id: channel, content: id }) as any;
    state.messages["1"] = { items: [message("5", "1"), message("6", "1"), message("7", "1")], hasMore: false, fresh: true };
    state.messages["2"] = { items: [message("5", "2")], hasMore: false, fresh: true };
    applyEvent(state, "MESSAGE_DELETE_BULK", { ids: ["5", "7", "9"], channel_id: "1", guild_id: "3" });
    expect(state.messages["1"].items.map((m) => m.id)).toEqual(["6"]);
    expect(state.messages["2"].items.map((m) => m.id)).toEqual(["5"]);
  });
});
