// The audit sentences, permission words and durations of server settings in Russian: whole sentences with
// the names in place, and plurals in all of Russian's forms.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setLanguage } from "../src/i18n/index.svelte";
import { describeEntry, actionLabel, type Names } from "../src/settings/guild/auditText";
import { PERMISSIONS, groupLabel } from "../src/settings/guild/permissionText";
import { slowmodeLabel } from "../src/settings/guild/rooms/order";
import { TIMEOUTS } from "../src/settings/guild/members/rank";
import type { AuditEntry, UserSummary } from "../src/lib/types";

const user = (id: string, name: string) => ({ id, username: name, display_name: name }) as unknown as UserSummary;
const names: Names = {
  user: (id) => ({ "2": "thor", "3": "loki" })[id] ?? null,
  role: (id) => ({ "11": "helper" })[id] ?? null,
  room: (id) => ({ "100": "general" })[id] ?? null,
  time: (iso) => iso.slice(11, 16),
};
const entry = (action: string, extra: Partial<AuditEntry> = {}): AuditEntry => ({
  id: "900", action, guild_id: "10", actor_id: "2", actor: user("2", "thor"), target_type: "user", target_id: "3",
  reason: null, data: {}, created_at: "2025-03-01T12:00:00.000Z", ...extra,
});

describe("server settings in Russian", () => {
  beforeAll(() => setLanguage("ru"));
  afterAll(() => setLanguage("en"));

  it("words audit entries as whole Russian sentences", () => {
    expect(describeEntry(entry("member.kick"), names)).toBe("thor выгнал(а) участника loki");
    expect(describeEntry(entry("member.role_add", { data: { role_id: "11" } }), names)).toBe("thor выдал(а) участнику loki роль «helper»");
    expect(describeEntry(entry("member.role_add", { target_id: "2", data: { role_id: "11" } }), names)).toBe("thor выдал(а) себе роль «helper»");
    expect(describeEntry(entry("channel.update", { target_type: "channel", target_id: "100", data: { changes: { topic: [null, "Skål"] } } }), names))
      .toBe("thor изменил(а) в канале #general тему: пусто → «Skål»");
    expect(describeEntry(entry("guild.update", { data: { changes: { description: [null, "Mead"], icon_file_id: [null, "77"] } } }), names))
      .toBe("thor изменил(а) описание: пусто → «Mead» и установил(а) значок");
    expect(describeEntry(entry("emoji.create", { data: {} }), names)).toBe("thor добавил(а) эмодзи");
    expect(describeEntry(entry("guild.create", { actor: null, actor_id: null }), names)).toBe("Система создал(а) сервер");
    expect(actionLabel("member.ban")).toBe("Участник забанен");
  });

  it("names permissions and durations with Russian plurals", () => {
    expect(PERMISSIONS.find((p) => p.name === "KICK_MEMBERS")?.label).toBe("Выгонять участников");
    expect(groupLabel("Voice")).toBe("Голосовые каналы");
    expect(slowmodeLabel(0)).toBe("Выкл.");
    expect(slowmodeLabel(5)).toBe("5 секунд");
    expect(slowmodeLabel(120)).toBe("2 минуты");
    expect(slowmodeLabel(3600)).toBe("1 час");
    expect(TIMEOUTS.map((t) => t.label)).toEqual(["60 секунд", "5 минут", "10 минут", "1 час", "1 день", "1 неделя"]);
  });
});
