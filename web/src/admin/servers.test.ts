import { describe, expect, it } from "vitest";
import type { UserSummary } from "../lib/types";
import { SERVERS_PAGE, serversQuery, withUpdate } from "./servers";
import type { AdminGuild } from "./types";

const owner = { id: "9", username: "freya", display_name: "Freya" } as UserSummary;
const guild = (id: string, name: string, is_main = false): AdminGuild => ({
  id, name, description: null, icon_file_id: null, banner_file_id: null, splash_file_id: null, public: false, public_invite_code: null, owner_id: "9", member_count: 3, system_channel_id: null,
  is_main, created_at: "2025-01-01T00:00:00.000Z", owner,
});

describe("servers list", () => {
  it("asks with the trimmed name search, the main filter and the cursor", () => {
    expect(serversQuery({ q: "", mainOnly: false })).toEqual({ limit: SERVERS_PAGE, q: undefined, main: undefined, before: undefined });
    expect(serversQuery({ q: "  Long ", mainOnly: true }, "123")).toEqual({ limit: SERVERS_PAGE, q: "Long", main: "true", before: "123" });
  });

  it("replaces the answered server and keeps its owner", () => {
    const list = [guild("1", "Longhouse"), guild("2", "Cellar")];
    const { owner: _, ...answered } = guild("2", "Mead Cellar"); // the service answers a Guild, without its owner
    const { list: next, removed } = withUpdate(list, answered, false);
    expect(next.map((g) => g.name)).toEqual(["Longhouse", "Mead Cellar"]);
    expect(next[1].owner).toEqual(owner);
    expect(removed).toBe(0);
  });

  it("keeps one main server: making one main unsets the others", () => {
    const list = [guild("1", "Longhouse", true), guild("2", "Cellar")];
    const { list: next } = withUpdate(list, guild("2", "Cellar", true), false);
    expect(next.map((g) => g.is_main)).toEqual([false, true]);
  });

  it("under the main filter, a server no longer main leaves the list", () => {
    const { list: next, removed } = withUpdate([guild("1", "Longhouse", true)], guild("1", "Longhouse", false), true);
    expect(next).toEqual([]);
    expect(removed).toBe(1);
  });
});
