import { describe, expect, it } from "vitest";
import {
  activeCompletion, applyCompletion, COMMANDS, decodeReferences, encodeReferences, lengthOf, matchCommands, MESSAGE_LENGTH, rank, typedMentions,
} from "../src/lib/completion";
import { customToken, customUrl, loadEmojis, searchCustom, searchEmojis, shortcodeOf, type UnicodeEmoji } from "../src/lib/emoji";
import { formatBytes, limitWords, uploadErrorText } from "../src/lib/upload";
import type { Emoji } from "../src/lib/types";

describe("which word is being completed", () => {
  it("finds @, # and : words at the caret", () => {
    expect(activeCompletion("hi @fr", 6)).toEqual({ trigger: "@", query: "fr", start: 3, end: 6 });
    expect(activeCompletion("@", 1)).toEqual({ trigger: "@", query: "", start: 0, end: 1 });
    expect(activeCompletion("see #gen", 8)).toEqual({ trigger: "#", query: "gen", start: 4, end: 8 });
    expect(activeCompletion("nice :thu", 9)).toEqual({ trigger: ":", query: "thu", start: 5, end: 9 });
    expect(activeCompletion("(@th", 4)?.trigger).toBe("@");
  });

  it("looks only before the caret", () => {
    expect(activeCompletion("@freya and more", 6)).toEqual({ trigger: "@", query: "freya", start: 0, end: 6 });
    expect(activeCompletion("@freya and more", 15)).toBeNull();
  });

  it("leaves e-mail addresses, times, smileys and finished words alone", () => {
    expect(activeCompletion("mail me at a@b", 14)).toBeNull();
    expect(activeCompletion("at 10:30", 8)).toBeNull();
    expect(activeCompletion("ok :)", 5)).toBeNull();
    expect(activeCompletion("ok :s", 5)).toBeNull(); // one letter is not enough for emojis
    expect(activeCompletion("hi @freya ", 10)).toBeNull();
    expect(activeCompletion("issue#12", 8)).toBeNull();
  });

  it("completes commands only at the very start of the message", () => {
    expect(activeCompletion("/sc", 3)).toEqual({ trigger: "/", query: "sc", start: 0, end: 3 });
    expect(activeCompletion("/", 1)).toEqual({ trigger: "/", query: "", start: 0, end: 1 });
    expect(activeCompletion("/me waves", 9)).toBeNull();
    expect(activeCompletion("a /me", 5)).toBeNull();
    expect(activeCompletion("//escaped", 9)).toBeNull();
  });
});

describe("inserting a pick", () => {
  it("replaces the word and adds one space", () => {
    const text = "hi @fr";
    const active = activeCompletion(text, 6)!;
    expect(applyCompletion(text, active, "@freya")).toEqual({ text: "hi @freya ", caret: 10 });
  });

  it("keeps the text after the caret and does not double a space", () => {
    const text = "hi @fr how are you";
    const active = activeCompletion(text, 6)!;
    expect(applyCompletion(text, active, "@freya")).toEqual({ text: "hi @freya how are you", caret: 10 });
  });

  it("turns readable words into the interface's tokens on send, longest first, not inside code", () => {
    const refs = [
      { shown: "@thor", token: "<@1>" },
      { shown: "@thorin", token: "<@2>" },
      { shown: "#general", token: "<#3>" },
      { shown: ":mead:", token: "<:mead:4>" },
    ];
    expect(encodeReferences("@thorin and @thor in #general :mead: `@thor`", refs)).toBe(
      "<@2> and <@1> in <#3> <:mead:4> `@thor`",
    );
    expect(encodeReferences("@thorsten is someone else", refs)).toBe("@thorsten is someone else");
    expect(encodeReferences("no refs", [])).toBe("no refs");
  });

  it("reads a saved draft back into words and references", () => {
    const names = { user: (id: string) => (id === "1" ? "thor" : null), room: (id: string) => (id === "3" ? "general" : null) };
    const { text, refs } = decodeReferences("<@1> see <#3> <:mead:4> <@9>", names);
    expect(text).toBe("@thor see #general :mead: <@9>");
    expect(encodeReferences(text, refs)).toBe("<@1> see <#3> <:mead:4> <@9>");
  });
});

describe("ranking and commands", () => {
  it("orders exact, prefix, word prefix, then substring", () => {
    const people = ["ingrid", "grim", "sigrid the bold", "grimhild"];
    expect(rank(people, "grim", (p) => [p])).toEqual(["grim", "grimhild"]);
    expect(rank(people, "rid", (p) => [p])).toEqual(["ingrid", "sigrid the bold"]);
    expect(rank(people, "the", (p) => [p])).toEqual(["sigrid the bold"]);
    expect(rank(people, "", (p) => [p], 2)).toEqual(["ingrid", "grim"]);
    expect(rank(["smiley", "smile", "small"], "sm", (p) => [p])).toEqual(["smile", "small", "smiley"]);
  });

  it("lists the service's commands", () => {
    expect(matchCommands("").map((c) => c.name)).toEqual(["me", "whisper", "scream", "ls"]);
    expect(matchCommands("s").map((c) => c.name)).toEqual(["scream"]);
    expect(matchCommands("x")).toEqual([]);
  });
});

describe("emoji lookup", () => {
  const few: UnicodeEmoji[] = [
    { emoji: "😀", name: "grinning face", shortcodes: ["grinning"], group: 0 },
    { emoji: "👍", name: "thumbs up", shortcodes: ["+1", "thumbsup"], group: 1 },
    { emoji: "👎", name: "thumbs down", shortcodes: ["-1", "thumbsdown"], group: 1 },
    { emoji: "🍺", name: "beer mug", shortcodes: ["beer"], group: 4 },
  ];

  it("finds by shortcode and by name, best first", () => {
    expect(searchEmojis(few, "thumbsu").map((e) => e.emoji)).toEqual(["👍"]);
    expect(searchEmojis(few, "thumbs").map((e) => e.emoji)).toEqual(["👍", "👎"]);
    expect(searchEmojis(few, "mug").map((e) => e.emoji)).toEqual(["🍺"]);
    expect(searchEmojis(few, ":beer:").map((e) => e.emoji)).toEqual(["🍺"]);
  });

  it("finds custom emojis and writes their token and image address", () => {
    const mead = { id: "44", name: "mead", guild_id: "1", file_id: "99", token: "<:mead:44>", animated: false, creator_id: null, created_at: "" };
    expect(searchCustom([mead], "me")).toEqual([mead]);
    expect(customToken(mead)).toBe("<:mead:44>");
    expect(customToken({ id: "5", name: "horn" } as Emoji)).toBe("<:horn:5>");
    expect(customUrl(mead)).toBe("/files/99");
  });

  it("builds the Unicode list from emojibase at build time", async () => {
    const { groups, emojis } = await loadEmojis();
    expect(groups[0]).toBe("smileys & emotion");
    expect(emojis.length).toBeGreaterThan(1500);
    expect(emojis.some((e) => e.group === 2)).toBe(false); // skin-tone components are not offered
    expect(searchEmojis(emojis, "thumbsup")[0].emoji).toBe("👍");
    expect(searchEmojis(emojis, "joy")[0].emoji).toBe("😂");
  });
});

describe("attachments in words", () => {
  it("sizes", () => {
    expect(formatBytes(1)).toBe("1 byte");
    expect(formatBytes(999)).toBe("999 bytes");
    expect(formatBytes(1500)).toBe("1.5 KB");
    expect(formatBytes(25_000_000)).toBe("25 MB");
  });

  it("refusals", () => {
    expect(uploadErrorText("big.zip", 413, { code: "file.too_large", message: "The file is too large." }, 26214400))
      .toBe("big.zip is larger than the 25 MiB this server allows.");
    expect(uploadErrorText("big.zip", 413, { code: "file.too_large", message: "The file is too large." }))
      .toBe("big.zip is larger than this server allows.");
    expect(limitWords(900_000)).toBe("879 KiB");
    expect(limitWords(1_572_864)).toBe("1.5 MiB");
    expect(uploadErrorText("x.exe", 415, { code: "file.unsupported_type", message: "no" })).toBe("x.exe: this type of file is not accepted.");
    expect(uploadErrorText("a.png", 403, { code: "perm.denied", message: "no" })).toBe("You may not attach files here.");
  });
});

describe("shortcodes shown", () => {
  it("prefer the one that fits what was typed, else a word", () => {
    const thumbs: UnicodeEmoji = { emoji: "👍", name: "thumbs up", shortcodes: ["+1", "thumbsup"], group: 1 };
    expect(shortcodeOf(thumbs, "thumbsu")).toBe(":thumbsup:");
    expect(shortcodeOf(thumbs, "+")).toBe(":+1:");
    expect(shortcodeOf(thumbs)).toBe(":thumbsup:");
    expect(shortcodeOf({ emoji: "🫠", name: "melting face", shortcodes: [], group: 0 })).toBe("melting face");
  });
});

describe("typed mentions and the length", () => {
  const people = [
    { id: "1", names: ["thor", "Thor Odinson"] },
    { id: "2", names: ["freya", "Freya"] },
    { id: "3", names: ["loki", "Twin"] },
    { id: "4", names: ["loki2", "Twin"] },
  ];

  it("resolves a name that is one person's, in any case, longest first, outside code", () => {
    const text = "hi @THOR, @Thor Odinson and @freya! `@thor` @Twin @nobody a@thor";
    const refs = typedMentions(text, people);
    expect(refs).toEqual([
      { shown: "@THOR", token: "<@1>" },
      { shown: "@Thor Odinson", token: "<@1>" },
      { shown: "@freya", token: "<@2>" },
    ]);
    expect(encodeReferences(text, refs)).toBe("hi <@1>, <@1> and <@2>! `@thor` @Twin @nobody a@thor");
  });

  it("does not read a longer word as a name", () => {
    expect(typedMentions("@thorin and @freyas", people)).toEqual([]);
  });

  it("counts code points as the service does", () => {
    expect(lengthOf("🍺🍺")).toBe(2);
    expect(lengthOf("a".repeat(MESSAGE_LENGTH))).toBe(4000);
  });

  it("explains every command in one line", () => {
    for (const c of COMMANDS) {
      expect(c.description.length).toBeGreaterThan(10);
      expect(c.description).not.toContain("\n");
    }
  });
});
