// The words of muting (lib/notify.ts keeps the choices and the times): the mute menu's choices, what a
// choice did, and until when notifications are off, in the shown language and the account's time zone.

import { dayKey, formatDate } from "../i18n/format";
import { t } from "../i18n/index.svelte";

/** "For 15 minutes", "For 1 hour", "Until I turn it back on" (MUTE_CHOICES' minutes). */
export function muteChoice(minutes: number | null): string {
  if (minutes === null) return t("ui.mute.forever");
  if (minutes % 60 === 0) return t("ui.mute.forHours", { count: minutes / 60 });
  return t("ui.mute.forMinutes", { count: minutes });
}

/** What is shown about a mute that is on: its kind and its end (`mutedWords` of lib/notify.ts, in words). */
export function mutedState(mutedUntil: string | null, now: number = Date.now()): { kind: string; time: string; weekday: string } {
  const end = mutedUntil ? Date.parse(mutedUntil) : NaN;
  if (Number.isNaN(end) || end - now > 365 * 24 * 3600_000) return { kind: "forever", time: "", weekday: "" };
  const today = dayKey(now) === dayKey(end);
  return { kind: today ? "today" : "later", time: formatDate(end, "time"), weekday: formatDate(end, "weekday") };
}
