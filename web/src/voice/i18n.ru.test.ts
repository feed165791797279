// Voice's words follow the shown language.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setLanguage, t } from "../i18n/index.svelte";
import { phaseWords } from "./reduce";

describe("voice in Russian", () => {
  beforeAll(async () => {
    await setLanguage("ru");
  });
  afterAll(async () => {
    await setLanguage("en");
  });

  it("says the connection's state and counts people in a call", () => {
    expect(phaseWords("connecting")).toBe("Подключение…");
    expect(phaseWords("failed")).toBe("Медиасервер недоступен — вы в списке, но никого не слышите");
    expect(t("voice.call.inCall", { count: 1 })).toBe("1 участник в звонке");
    expect(t("voice.call.inCall", { count: 3 })).toBe("3 участника в звонке");
    expect(t("voice.call.inCall", { count: 11 })).toBe("11 участников в звонке");
  });
});
