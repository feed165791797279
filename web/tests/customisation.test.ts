import { describe, expect, it } from "vitest";
import { colorOf, frameOf, heldRoles, hexOf, iconOf, nameColorOf, rolesShowing } from "../src/lib/cosmetics";
import { applyEvent, createState } from "../src/lib/state";
import type { Cosmetic, GuildSnapshot, Member, Role, Sound, Style } from "../src/lib/types";
import { configure } from "../src/lib/api";
import {
  DEFAULT_LIMITS, EMOJI_MAX_BYTES, mediaLimits, GALLERY_MAX_BYTES, IMAGE_TYPES, PALETTE_EVENTS, SOUND_TYPES, emojiNameProblem, fileProblem, limitWords, nameFromFile,
  paletteLabel, refusal,
} from "../src/settings/guild/custom/forms";

const role = (id: string, position: number, extra: Partial<Role> = {}): Role => ({
  id, guild_id: "1", name: `role${id}`, color: 0, position, permissions: "", hoist: false, is_default: false, frame_id: null, icon_id: null, ...extra,
});
const item = (id: string, kind: Cosmetic["kind"]): Cosmetic => ({ id, guild_id: "1", kind, name: `item${id}`, file_id: `f${id}`, created_at: "" });
const style = (extra: Partial<Style>): Style => ({ scope: "guild", guild_id: "1", frame_id: null, icon_id: null, color: null, updated_at: "", ...extra });

function guildWith(roles: Role[], cosmetics: Cosmetic[] | undefined): GuildSnapshot {
  return {
    id: "1", name: "Hall", description: null, icon_file_id: null, banner_file_id: null, splash_file_id: null, public: false, public_invite_code: null, is_main: false, owner_id: "9", member_count: 1, system_channel_id: null,
    created_at: "", roles, channels: [], emojis: [], cosmetics,
    member: { guild_id: "1", user: { id: "5" } as never, nick: null, roles: [], joined_at: "", timeout_until: null, style: null },
  };
}
const member = (roles: string[], s: Style | null = null): Pick<Member, "roles" | "style"> => ({ roles, style: s });

describe("cosmetics of a member", () => {
  const gallery = [item("f1", "frame"), item("f2", "frame"), item("i1", "icon"), item("i2", "icon")];
  const roles = [
    role("1", 0, { is_default: true, frame_id: "f2" }),
    role("10", 1, { color: 0x00ff00, icon_id: "i2" }),
    role("11", 2, { frame_id: "f1", color: 0 }),
    role("12", 3, { color: 0xff0000 }),
  ];
  const guild = guildWith(roles, gallery);

  it("takes the frame of the highest role that has one, the default role last", () => {
    expect(frameOf(guild, member(["10", "11"]))?.id).toBe("f1");
    expect(frameOf(guild, member(["10"]))?.id).toBe("f2");
    expect(heldRoles(guild, member(["10", "12"])).map((r) => r.id)).toEqual(["12", "10", "1"]);
  });

  it("puts the member's own style over their roles", () => {
    const own = style({ frame_id: "f2", icon_id: "i1", color: 0x123456 });
    expect(frameOf(guild, member(["11"], own))?.id).toBe("f2");
    expect(iconOf(guild, member(["10"], own))?.id).toBe("i1");
    expect(nameColorOf(guild, member(["12"], own))).toBe("#123456");
  });

  it("colours a name with the highest coloured role when the style has no colour", () => {
    expect(nameColorOf(guild, member(["10", "11", "12"]))).toBe("#ff0000");
    expect(nameColorOf(guild, member(["10", "11"]))).toBe("#00ff00");
    expect(nameColorOf(guild, member(["11"]))).toBeUndefined();
    // A style colour of 0 is black, not "no colour".
    expect(nameColorOf(guild, member(["12"], style({ color: 0 })))).toBe("#000000");
  });

  it("shows nothing for an item the client does not know or of the wrong kind", () => {
    expect(frameOf(guild, member([], style({ frame_id: "i1" })))?.id).toBe("f2");
    expect(iconOf(guildWith(roles, undefined), member(["10"]))).toBeNull();
    expect(iconOf(guild, member(["11"]))).toBeNull();
  });

  it("names the roles that show an item", () => {
    expect(rolesShowing(guild, gallery[0]).map((r) => r.id)).toEqual(["11"]);
    expect(rolesShowing(guild, gallery[3]).map((r) => r.id)).toEqual(["10"]);
    expect(rolesShowing(guild, gallery[2])).toEqual([]);
  });

  it("converts colours both ways", () => {
    expect(hexOf(0xabcdef)).toBe("#abcdef");
    expect(hexOf(255)).toBe("#0000ff");
    expect(colorOf("#ABCDEF")).toBe(0xabcdef);
    expect(colorOf("red")).toBeNull();
  });
});

describe("events of the server's collections", () => {
  function withGuild() {
    const state = createState();
    state.guilds["1"] = guildWith([], []);
    state.guildOrder = ["1"];
    return state;
  }

  it("GUILD_EMOJIS_UPDATE replaces the emoji list, which the pickers read", () => {
    const state = withGuild();
    const emoji = { id: "7", guild_id: "1", name: "mead", file_id: "70", token: "<:mead:7>", animated: false, creator_id: null, created_at: "" };
    applyEvent(state, "GUILD_EMOJIS_UPDATE", { guild_id: "1", emojis: [emoji] });
    expect(state.guilds["1"].emojis).toEqual([emoji]);
    applyEvent(state, "GUILD_EMOJIS_UPDATE", { guild_id: "1", emojis: [] });
    expect(state.guilds["1"].emojis).toEqual([]);
    // Another server's list changes nothing here.
    applyEvent(state, "GUILD_EMOJIS_UPDATE", { guild_id: "2", emojis: [emoji] });
    expect(state.guilds["2"]).toBeUndefined();
  });

  it("GUILD_SOUNDS_UPDATE keeps the list, or drops it when the payload has none", () => {
    const state = withGuild();
    const sound: Sound = { id: "8", guild_id: "1", name: "horn", emoji: null, kind: "soundboard", palette_event: null, file_id: "80",
      duration_ms: 500, creator_id: null, created_at: "" };
    applyEvent(state, "GUILD_SOUNDS_UPDATE", { guild_id: "1", sounds: [sound] });
    expect(state.guilds["1"].sounds).toEqual([sound]);
    applyEvent(state, "GUILD_SOUNDS_UPDATE", { guild_id: "1" } as never);
    expect(state.guilds["1"].sounds).toBeUndefined();
  });

  it("GUILD_COSMETICS_UPDATE replaces the gallery, and the member list shows it", () => {
    const state = withGuild();
    state.guilds["1"].roles = [role("1", 0, { is_default: true }), role("3", 1, { frame_id: "f1" })];
    expect(frameOf(state.guilds["1"], member(["3"]))).toBeNull();
    applyEvent(state, "GUILD_COSMETICS_UPDATE", { guild_id: "1", cosmetics: [item("f1", "frame")] });
    expect(frameOf(state.guilds["1"], member(["3"]))?.file_id).toBe("ff1");
  });
});

describe("upload checks", () => {
  it("applies the emoji name rule before sending", () => {
    expect(emojiNameProblem("mead")).toBe("");
    expect(emojiNameProblem("Mead_Hall_2")).toBe("");
    expect(emojiNameProblem("")).toMatch(/name/);
    expect(emojiNameProblem("m")).toMatch(/2 to 32/);
    expect(emojiNameProblem("x".repeat(33))).toMatch(/2 to 32/);
    expect(emojiNameProblem("mead-hall")).toMatch(/letters, digits/);
    expect(emojiNameProblem("méad")).toMatch(/letters, digits/);
  });

  it("makes a name from the file name", () => {
    expect(nameFromFile("party parrot.gif", true)).toBe("party_parrot");
    expect(nameFromFile("a.png", true)).toBe("");
    expect(nameFromFile("Horn of Gondor.mp3", false)).toBe("Horn of Gondor");
  });

  it("refuses a wrong type or a too large file in words", () => {
    const png = { name: "a.png", type: "image/png", size: 1000 };
    expect(fileProblem(png, IMAGE_TYPES, EMOJI_MAX_BYTES, "an image")).toBe("");
    expect(fileProblem({ ...png, type: "text/plain" }, IMAGE_TYPES, EMOJI_MAX_BYTES, "an image")).toBe("a.png is not an image.");
    expect(fileProblem({ ...png, size: EMOJI_MAX_BYTES + 1 }, IMAGE_TYPES, EMOJI_MAX_BYTES, "an image")).toMatch(/512 KB/);
    expect(fileProblem({ name: "s.wav", type: "audio/wav", size: 10 }, SOUND_TYPES, 1, "a sound")).toMatch(/most this server accepts/);
    expect(fileProblem({ name: "s.wav", type: "audio/x-wav", size: 1 }, SOUND_TYPES, 10, "a sound")).toBe("");
    expect(limitWords(GALLERY_MAX_BYTES)).toBe("1 MB");
  });

  it("puts the service's refusals in words", () => {
    expect(refusal(409, { code: "emoji.name_taken", message: "x" }, { "emoji.name_taken": "Taken." })).toBe("Taken.");
    expect(refusal(413, { code: "file.too_large", message: "The file is too large" })).toMatch(/larger than this server accepts/);
    expect(refusal(413, { code: "file.too_large", message: "" }, { "413": "Too big for an emoji." })).toBe("Too big for an emoji.");
    expect(refusal(415, { code: "file.unsupported_type", message: "" }, { "415": "Not an image." })).toBe("Not an image.");
    expect(refusal(403, { code: "perm.denied", message: "" })).toMatch(/permission/);
  });

  it("names every interface event in words", () => {
    expect(PALETTE_EVENTS.map((e) => e.id)).toEqual(["message", "mention", "dm_message", "voice_join", "voice_leave", "mute", "unmute",
      "deafen", "undeafen", "call_ring", "call_end", "stream_start", "stream_end"]);
    expect(paletteLabel("mention")).toBe("Someone mentions you");
  });
});

describe("the instance's media limits", () => {
  it("are read once from the service's meta, over the defaults", async () => {
    let calls = 0;
    configure({
      fetch: (async (url: string) => {
        calls += 1;
        expect(url).toBe("/api/v1/meta");
        return new Response(JSON.stringify({ limits: { emoji_max_bytes: 1000, sound_max_bytes: 2000 } }), { status: 200 });
      }) as unknown as typeof fetch,
    });
    const limits = await mediaLimits();
    expect(limits.emoji_max_bytes).toBe(1000);
    expect(limits.sound_max_bytes).toBe(2000);
    expect(limits.gallery_max_bytes).toBe(DEFAULT_LIMITS.gallery_max_bytes);
    await mediaLimits();
    expect(calls).toBe(1);
  });
});
