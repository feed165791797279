// The server settings' words in Russian, where plurals and cases differ from English: invitation expiries
// and uses, media limits, durations.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setLanguage } from "../src/i18n/index.svelte";
import { expiryWords, maxUsesWords, spanWords, usesWords } from "../src/settings/guild/invites/words";
import { durationWords, fileProblem, IMAGE_TYPES, limitWords, paletteLabel } from "../src/settings/guild/custom/forms";

describe("server settings in Russian", () => {
  beforeAll(async () => {
    await setLanguage("ru");
  });
  afterAll(async () => {
    await setLanguage("en");
  });

  it("counts the time an invitation has left in the right case and form", () => {
    const now = Date.parse("2025-03-01T12:00:00.000Z");
    expect(expiryWords({ expires_at: "2025-03-01T12:01:00.000Z" }, now)).toBe("Истекает через 1 минуту");
    expect(expiryWords({ expires_at: "2025-03-01T12:03:00.000Z" }, now)).toBe("Истекает через 3 минуты");
    expect(expiryWords({ expires_at: "2025-03-01T17:00:00.000Z" }, now)).toBe("Истекает через 5 часов");
    expect(expiryWords({ expires_at: "2025-03-02T12:00:00.000Z" }, now)).toBe("Истекает через 1 день");
    expect(expiryWords({ expires_at: null }, now)).toBe("Без срока действия");
    expect(spanWords(21 * 60_000)).toBe("21 минута");
    expect(spanWords(2 * 86_400_000)).toBe("2 дня");
  });

  it("counts uses", () => {
    expect(usesWords({ uses: 1, max_uses: 0 })).toBe("1 использование, без ограничений");
    expect(usesWords({ uses: 5, max_uses: 0 })).toBe("5 использований, без ограничений");
    expect(usesWords({ uses: 2, max_uses: 10 })).toBe("Использовано 2 из 10");
    expect(maxUsesWords(25)).toBe("25 использований");
    expect(maxUsesWords(0)).toBe("Без ограничений");
  });

  it("words sizes, durations, file refusals and events", () => {
    expect(limitWords(1048576)).toBe("1 МБ");
    expect(limitWords(524288)).toBe("512 КБ");
    expect(durationWords(850)).toBe("850 мс");
    expect(durationWords(1200)).toBe("1,2 с");
    expect(fileProblem({ name: "a.txt", type: "text/plain", size: 1 }, IMAGE_TYPES, 10, "изображение")).toBe("Файл a.txt — не изображение.");
    expect(paletteLabel("mention")).toBe("Кто-то упоминает вас");
  });
});

describe("server settings in English", () => {
  it("keep their words", () => {
    expect(durationWords(1000)).toBe("1.0 s");
    expect(durationWords(12_400)).toBe("12 s");
    expect(maxUsesWords(1)).toBe("1 use");
    expect(maxUsesWords(0)).toBe("No limit");
  });
});
