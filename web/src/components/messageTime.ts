// The times of messages (the list's day separators, a message's header and its hover time, pins and search
// results) in the shown language and the account's time zone (i18n/format.ts): "Today", "Yesterday", else
// the date.

import { dayKey, formatDate } from "../i18n/format";
import { t } from "../i18n/index.svelte";

/** The calendar day before a day key ("2026-12-06" → "2026-12-05"). */
function dayBefore(key: string): string {
  const [y, m, d] = key.split("-").map(Number);
  return new Date(Date.UTC(y, m - 1, d - 1)).toISOString().slice(0, 10);
}

/** "Today", "Yesterday" or the date (Dec 6, 2026 / 6 дек. 2026 г.), in the reader's time zone. */
export function dayLabel(iso: string, now: Date = new Date()): string {
  const day = dayKey(iso);
  const today = dayKey(now);
  if (day === today) return t("chat.day.today");
  if (day === dayBefore(today)) return t("chat.day.yesterday");
  return formatDate(iso, "day");
}

/** Whether two moments fall on one calendar day of the reader's time zone. */
export function sameDay(a: string, b: string): boolean {
  return dayKey(a) === dayKey(b);
}

/** 14:05 */
export function shortTime(iso: string): string {
  return formatDate(iso, "time");
}

/** The whole moment, for a tooltip. */
export function fullTime(iso: string): string {
  return formatDate(iso, "full");
}
