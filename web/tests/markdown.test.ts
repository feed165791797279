import { describe, expect, it } from "vitest";
import { copyable, parse, plain } from "../src/lib/format";
import { tokensOf } from "../src/lib/highlight";

const t = (text: string) => ({ kind: "text", text });

describe("markdown as Discord writes it", () => {
  it("quotes lines with `> ` and everything after `>>> `", () => {
    expect(parse("> one\n> two\nafter")).toEqual([
      { kind: "quote", children: [t("one\ntwo")] },
      t("after"),
    ]);
    expect(parse("before\n>>> all\nof **this**")).toEqual([
      t("before"),
      { kind: "quote", children: [t("all\nof "), { kind: "bold", children: [t("this")] }] },
    ]);
    // Without the space it is not a quote; nor is a quote inside a quote.
    expect(parse(">not a quote")).toEqual([t(">not a quote")]);
    expect(parse("> > inner")).toEqual([{ kind: "quote", children: [t("> inner")] }]);
  });

  it("reads headings of three levels at a line's start only", () => {
    expect(parse("# Big\n## Mid\n### Small\n#### none\nsay # not")).toEqual([
      { kind: "heading", level: 1, children: [t("Big")] },
      { kind: "heading", level: 2, children: [t("Mid")] },
      { kind: "heading", level: 3, children: [t("Small")] },
      t("#### none\nsay # not"),
    ]);
    expect(parse("#general")).toEqual([t("#general")]);
  });

  it("reads bulleted and numbered lists", () => {
    expect(parse("- mead\n* ale\n3. first\n4. second\nend")).toEqual([
      { kind: "list", ordered: false, start: 1, items: [[t("mead")], [t("ale")]] },
      { kind: "list", ordered: true, start: 3, items: [[t("first")], [t("second")]] },
      t("end"),
    ]);
    expect(parse("-not a list")).toEqual([t("-not a list")]);
  });

  it("reads underline, spoilers and both italics, and leaves snake_case alone", () => {
    expect(parse("__under__ ||hidden **bold**|| _it_ snake_case_name")).toEqual([
      { kind: "underline", children: [t("under")] },
      t(" "),
      { kind: "spoiler", children: [t("hidden "), { kind: "bold", children: [t("bold")] }] },
      t(" "),
      { kind: "italic", children: [t("it")] },
      t(" snake_case_name"),
    ]);
  });

  it("masks http(s) links only, and never behind text that is itself an address", () => {
    expect(parse("[the saga](https://example.com/saga_(book))")).toEqual([
      { kind: "link", href: "https://example.com/saga_(book)", text: "the saga", masked: true },
    ]);
    expect(parse("[click](javascript:alert(1))")).toEqual([t("[click](javascript:alert(1))")]);
    expect(parse("[https://bank.example](https://evil.example)")).toEqual([
      { kind: "link", href: "https://evil.example", text: "https://evil.example" },
    ]);
  });

  it("keeps code blocks whole with their language, and block syntax inside them as code", () => {
    expect(parse("```py\n# not a heading\n- nor a list\n```\nafter")).toEqual([
      { kind: "codeblock", lang: "py", text: "# not a heading\n- nor a list\n" },
      t("after"),
    ]);
    expect(parse("```\nplain\n```")).toEqual([{ kind: "codeblock", lang: null, text: "plain\n" }]);
    expect(parse("`**x**` ||`y`||")).toEqual([
      { kind: "code", text: "**x**" },
      t(" "),
      { kind: "spoiler", children: [{ kind: "code", text: "y" }] },
    ]);
  });

  it("never turns markup into anything but text", () => {
    expect(parse("# <img src=x onerror=alert(1)>")).toEqual([
      { kind: "heading", level: 1, children: [t("<img src=x onerror=alert(1)>")] },
    ]);
  });

  it("hides spoilers in previews and keeps markdown when copying", () => {
    const names = { user: () => "freya", room: () => "general" };
    expect(plain("the end: ||Thor wins||", names)).toBe("the end: (spoiler)");
    expect(plain("> quoted\n- a\n- b", names)).toBe("quoted a · b");
    expect(copyable("**hi** <@1> in <#2> `<@3>`", names)).toBe("**hi** @freya in #general `<@3>`");
  });
});

describe("highlighted code", () => {
  it("reads highlight.js's markup into text and class runs", () => {
    expect(tokensOf('<span class="hljs-keyword">let</span> a = <span class="hljs-string">&quot;&lt;b&gt;&amp;&#x27;&quot;</span>;')).toEqual([
      { text: "let", cls: "hljs-keyword" },
      { text: " a = ", cls: "" },
      { text: "\"<b>&'\"", cls: "hljs-string" },
      { text: ";", cls: "" },
    ]);
    expect(tokensOf('<span class="hljs-title class_"><span class="hljs-keyword">x</span>y</span>')).toEqual([
      { text: "x", cls: "hljs-title class_ hljs-keyword" },
      { text: "y", cls: "hljs-title class_" },
    ]);
  });
});
