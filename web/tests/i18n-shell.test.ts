// The client's own words for the service's refusals (src/lib/api.ts, the `errors` catalogue), the sign-in
// lockout, the day labels and the mute words in Russian; English stays the service's own message.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiError, describe as words, errorText, lockoutWords } from "../src/lib/api";
import { dayLabel, typingText } from "../src/lib/format";
import { mutedWords } from "../src/lib/notify";
import { refusal } from "../src/lib/socialWords";
import { formatBytes, limitWords } from "../src/lib/upload";
import { i18n, setLanguage } from "../src/i18n/index.svelte";

beforeEach(() => {
  i18n.timeZone = "UTC";
});

afterEach(async () => {
  await setLanguage("en");
});

describe("errors in the reader's language", () => {
  it("says an error code in Russian, and in English keeps the service's message", async () => {
    const err = new ApiError(409, { code: "user.username_taken", message: "This username is taken" });
    expect(errorText(err)).toBe("This username is taken");
    await setLanguage("ru");
    expect(errorText(err)).toBe("Это имя пользователя уже занято");
    expect(words(403, { code: "perm.denied", message: "You do not have permission to do this" })).toBe("У вас нет прав на это действие");
  });

  it("falls back to the service's message for a code it does not know", async () => {
    await setLanguage("ru");
    expect(words(418, { code: "teapot.refused", message: "I am a teapot" })).toBe("I am a teapot");
    expect(words(502, null)).toBe("Сервер ответил кодом 502.");
    expect(words(0, null)).toMatch(/^Не удалось связаться с сервером/);
  });

  it("keeps a screen's own rewording and the server's detail of a validation failure, with the field's name", async () => {
    await setLanguage("ru");
    expect(words(415, { code: "file.unsupported_type", message: "Not an image.", own: true })).toBe("Not an image.");
    expect(words(422, { code: "validation.failed", message: "x", details: [{ field: "display_name", message: "too long" }] }))
      .toBe("Отображаемое имя: too long");
  });

  it("says the lockout with the time left, in Russian with the clock time it ends", async () => {
    const now = Date.UTC(2026, 11, 6, 14, 5);
    expect(lockoutWords(900, now)).toBe("Too many attempts. Try again in 15 minutes.");
    await setLanguage("ru");
    expect(lockoutWords(900, now)).toBe("Слишком много попыток входа. Попробуйте снова через 15 минут, в 14:20.");
    expect(lockoutWords(40, now)).toMatch(/через 40 секунд,/);
    expect(lockoutWords(120, now)).toMatch(/через 2 минуты,/);
  });

  it("says a friend refusal in Russian", async () => {
    await setLanguage("ru");
    const err = new ApiError(404, { code: "user.not_found", message: "Unknown user" });
    expect(refusal(err, "add-friend", "thor")).toBe("Здесь нет пользователя «thor». Проверьте, правильно ли написано имя.");
  });
});

describe("days, mutes and sizes in Russian", () => {
  it("names today and yesterday by the account's time zone", async () => {
    const now = new Date(Date.UTC(2026, 11, 6, 22, 30));
    i18n.timeZone = "Europe/Moscow"; // 01:30 on 7 December there
    expect(dayLabel("2026-12-06T21:10:00Z", now)).toBe("Today");
    expect(dayLabel("2026-12-06T20:50:00Z", now)).toBe("Yesterday");
    await setLanguage("ru");
    expect(dayLabel("2026-12-06T21:10:00Z", now)).toBe("Сегодня");
    expect(dayLabel("2026-12-06T20:50:00Z", now)).toBe("Вчера");
    expect(dayLabel("2026-11-02T12:00:00Z", now)).toMatch(/2 нояб\. 2026/);
  });

  it("says mutes, typing and sizes", async () => {
    const now = Date.UTC(2026, 11, 6, 10, 0);
    await setLanguage("ru");
    expect(mutedWords(new Date(now + 3600_000).toISOString(), now)).toBe("Уведомления отключены до 11:00");
    expect(typingText(["Фрея", "Тор"])).toBe("Фрея и Тор печатают…");
    expect(formatBytes(1500)).toBe("1,5 КБ");
    expect(formatBytes(5)).toBe("5 байт");
    expect(limitWords(26214400)).toBe("25 МиБ");
  });
});
