// The administration's words in Russian where plurals and number formats matter.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { i18n, setLanguage } from "../i18n/index.svelte";
import { formatBytes, fullNumber, longDate, shortDate } from "./charts/scale";
import { limitProblem, limitWords } from "./charts/limits";
import { instanceActionLabel } from "./auditWords";
import { verdicts } from "./userRules";
import type { AdminServer, AdminUser } from "./types";

const user = (over: Partial<AdminUser> = {}): AdminUser => ({
  id: "2", username: "loki", display_name: "Loki", avatar: null, email: null, is_instance_admin: false,
  totp_enabled: false, banned_at: null, deleted_at: null, created_at: "2026-01-01T00:00:00Z", last_seen_at: null,
  session_count: 0, guild_count: 0, badges: [], ...over,
} as AdminUser);
const owned = (n: number): AdminServer[] =>
  Array.from({ length: n }, (_, i) => ({ guild: { id: String(100 + i), name: `G${i}`, owner_id: "2" } }) as unknown as AdminServer);

describe("the administration in Russian", () => {
  let zone = "";
  beforeAll(async () => {
    zone = i18n.timeZone;
    i18n.timeZone = "Europe/Moscow";
    await setLanguage("ru");
  });
  afterAll(async () => {
    i18n.timeZone = zone;
    await setLanguage("en");
  });

  it("writes sizes and numbers the Russian way", () => {
    expect(limitWords(1572864)).toBe("1,5 МиБ");
    expect(limitWords(524288)).toBe("512 КиБ");
    expect(formatBytes(1)).toBe("1 байт");
    expect(formatBytes(3)).toBe("3 байта");
    expect(formatBytes(5)).toBe("5 байт");
    expect(formatBytes(1536)).toBe("1,5 КиБ");
    expect(fullNumber(50234).replace(/\s/g, " ")).toBe("50 234");
    expect(limitProblem(null)).toBe("Укажите размер.");
  });

  it("names the service's calendar days in Russian", () => {
    expect(shortDate("2025-01-31")).toMatch(/^31 янв/);
    expect(longDate("2025-03-09")).toMatch(/^9 мар.* 2025/);
  });

  it("counts owned servers with the right plural", () => {
    expect(verdicts(user(), "1", owned(1)).delete).toBe("Владеет сервером: сначала передайте или удалите его.");
    expect(verdicts(user(), "1", owned(3)).delete).toBe("Владеет 3 серверами: сначала передайте или удалите их.");
    expect(verdicts(user(), "1", owned(5)).delete).toBe("Владеет 5 серверами: сначала передайте или удалите их.");
    expect(instanceActionLabel("instance.user_ban")).toBe("Пользователь забанен на инстансе");
  });
});
