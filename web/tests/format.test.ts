import { describe, expect, it } from "vitest";
import { continues, parse, plain, typingText } from "../src/lib/format";

describe("message text", () => {
  it("finds mentions, rooms, custom emojis and links", () => {
    expect(parse("hi <@123> see <#456> <:wave:789> https://example.com/x.")).toEqual([
      { kind: "text", text: "hi " },
      { kind: "user", id: "123" },
      { kind: "text", text: " see " },
      { kind: "room", id: "456" },
      { kind: "text", text: " " },
      { kind: "emoji", name: "wave", id: "789" },
      { kind: "text", text: " " },
      { kind: "link", href: "https://example.com/x", text: "https://example.com/x" },
      { kind: "text", text: "." },
    ]);
  });

  it("reads emphasis and code, and nothing inside code", () => {
    expect(parse("**bold** *it* ~~no~~ `<@1>`")).toEqual([
      { kind: "bold", children: [{ kind: "text", text: "bold" }] },
      { kind: "text", text: " " },
      { kind: "italic", children: [{ kind: "text", text: "it" }] },
      { kind: "text", text: " " },
      { kind: "strike", children: [{ kind: "text", text: "no" }] },
      { kind: "text", text: " " },
      { kind: "code", text: "<@1>" },
    ]);
    expect(parse("```js\nlet a = 1;\n```")).toEqual([{ kind: "codeblock", lang: "js", text: "let a = 1;\n" }]);
  });

  it("keeps markup-looking text as text (rendered as text, never HTML)", () => {
    expect(parse("<b>x</b> javascript:alert(1)")).toEqual([{ kind: "text", text: "<b>x</b> javascript:alert(1)" }]);
  });

  it("only http and https become links", () => {
    expect(parse("ftp://x.y javascript://x").every((s) => s.kind === "text")).toBe(true);
  });

  it("words for previews", () => {
    expect(plain("hey <@1> in <#2> @everyone", { user: () => "freya", room: () => "general" })).toBe(
      "hey @freya in #general @everyone",
    );
  });

  it("typing in words", () => {
    expect(typingText(["Freya"])).toBe("Freya is typing…");
    expect(typingText(["Freya", "Thor"])).toBe("Freya and Thor are typing…");
    expect(typingText(["a", "b", "c", "d"])).toBe("Several people are typing…");
  });

  it("groups messages of one author within 7 minutes", () => {
    const a = { author: { id: "1" }, created_at: "2025-01-01T00:00:00.000Z", kind: "normal" };
    expect(continues(a, { ...a, created_at: "2025-01-01T00:06:00.000Z" })).toBe(true);
    expect(continues(a, { ...a, created_at: "2025-01-01T00:08:00.000Z" })).toBe(false);
    expect(continues(a, { ...a, author: { id: "2" } })).toBe(false);
    expect(continues(a, { ...a, reply_to_id: "5" })).toBe(false);
  });
});
