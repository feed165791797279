// The words of the chat in both languages: plurals, the typing line, system messages and days in the
// account's time zone (components/messageTime.ts, components/muteText.ts).
import { afterEach, describe, expect, it } from "vitest";
import { i18n, setLanguage, t, tParts } from "../src/i18n/index.svelte";
import { dayLabel, shortTime } from "../src/components/messageTime";
import { muteChoice, mutedState } from "../src/components/muteText";

afterEach(async () => {
  await setLanguage("en");
  i18n.timeZone = "UTC";
});

describe("chat words", () => {
  it("keep the English of the reactions and the typing line", () => {
    expect(t("chat.message.reactions", { emoji: "👍", count: 3 })).toBe("👍, 3 reactions");
    expect(t("chat.typing.one", { name: "Freya" })).toBe("Freya is typing…");
    expect(t("chat.typing.several", { count: 5 })).toBe("Several people are typing…");
  });

  it("speak Russian with plural forms", async () => {
    await setLanguage("ru");
    expect(t("chat.message.reactions", { emoji: "👍", count: 3 })).toBe("👍, 3 реакции");
    expect(t("chat.message.reactions", { emoji: "👍", count: 5 })).toBe("👍, 5 реакций");
    expect(t("chat.message.reactions", { emoji: "👍", count: 21 })).toBe("👍, 21 реакция");
    expect(t("chat.typing.one", { name: "Фрейя" })).toBe("Фрейя печатает…");
    expect(t("chat.typing.several", { count: 5 })).toBe("5 человек печатают…");
    expect(t("chat.composer.left", { count: 2 })).toBe("осталось 2");
    expect(t("ui.public.members", { count: 11 })).toBe("11 участников");
  });

  it("make a system message one sentence with the name as a part", async () => {
    expect(tParts("system.member_join", { name: "Freya" }, ["b"])).toEqual([
      { tag: "b", text: "Freya" }, { tag: null, text: " joined the server." },
    ]);
    await setLanguage("ru");
    expect(tParts("system.member_kick", { name: "Фрейя" }, ["b"]).map((p) => p.text).join("")).toBe("Участника Фрейя выгнали с сервера.");
  });

  it("tell days apart in the account's time zone", () => {
    const now = new Date("2026-12-06T22:30:00Z");
    i18n.timeZone = "Europe/Moscow"; // 7 December, 01:30 there
    expect(dayLabel("2026-12-06T21:30:00Z", now)).toBe("Today");
    expect(dayLabel("2026-12-06T20:30:00Z", now)).toBe("Yesterday");
    expect(shortTime("2026-12-06T21:30:00Z")).toMatch(/12:30/);
    i18n.timeZone = "UTC";
    expect(dayLabel("2026-12-06T21:30:00Z", now)).toBe("Today");
    expect(dayLabel("2026-12-05T23:30:00Z", now)).toBe("Yesterday");
    expect(dayLabel("2026-12-04T12:00:00Z", now)).toBe("Dec 4, 2026");
  });

  it("name the mute choices", async () => {
    expect(muteChoice(60)).toBe("For 1 hour");
    expect(muteChoice(15)).toBe("For 15 minutes");
    expect(muteChoice(null)).toBe("Until I turn it back on");
    expect(mutedState("3000-01-01T00:00:00.000Z").kind).toBe("forever");
    await setLanguage("ru");
    expect(muteChoice(8 * 60)).toBe("На 8 часов");
    expect(muteChoice(24 * 60)).toBe("На 24 часа");
  });
});
