// Dates, times and numbers through `Intl`, in the shown language and the account's time zone (the
// instance's default is Moscow's, so a reader elsewhere sees their own clock only once they chose it).
// Formatters are costly to make and cheap to use: one per language, zone and style, kept.

import { i18n } from "./index.svelte";

const STYLES = {
  /** 14:05 */
  time: { hour: "2-digit", minute: "2-digit" },
  /** 6 Dec 2026 / 6 дек. 2026 г. */
  day: { dateStyle: "medium" },
  /** 6 Dec 2026, 14:05 */
  moment: { dateStyle: "medium", timeStyle: "short" },
  /** Sunday, 6 December 2026 at 14:05:09 */
  full: { dateStyle: "full", timeStyle: "medium" },
  /** Sun */
  weekday: { weekday: "short" },
  /** 6 Dec */
  dayMonth: { day: "numeric", month: "short" },
  /** 6 Dec, 14:05 */
  dayMonthTime: { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" },
} as const satisfies Record<string, Intl.DateTimeFormatOptions>;

export type DateStyle = keyof typeof STYLES;

const dateFormats = new Map<string, Intl.DateTimeFormat>();
const numberFormats = new Map<string, Intl.NumberFormat>();

function dateFormat(style: DateStyle): Intl.DateTimeFormat {
  const id = `${i18n.language}|${i18n.timeZone}|${style}`;
  let format = dateFormats.get(id);
  if (!format) {
    format = new Intl.DateTimeFormat(i18n.language, { ...STYLES[style], timeZone: i18n.timeZone });
    dateFormats.set(id, format);
  }
  return format;
}

/** A moment in the reader's language and time zone; an unreadable value is shown as it came. */
export function formatDate(value: string | number | Date, style: DateStyle = "moment"): string {
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  return dateFormat(style).format(date);
}

/** The calendar day of a moment in the reader's time zone ("2026-12-06"), to tell days apart. */
export function dayKey(value: string | number | Date): string {
  const date = value instanceof Date ? value : new Date(value);
  const id = `|${i18n.timeZone}|key`;
  let format = dateFormats.get(id);
  if (!format) {
    format = new Intl.DateTimeFormat("en-CA", { timeZone: i18n.timeZone, year: "numeric", month: "2-digit", day: "2-digit" });
    dateFormats.set(id, format);
  }
  return format.format(date);
}

/** A number in the reader's language (1,234 / 1 234); `compact` gives 1.2K / 1,2 тыс. */
export function formatNumber(value: number, options: { compact?: boolean; maxFraction?: number } = {}): string {
  const id = `${i18n.language}|${options.compact ? "c" : ""}|${options.maxFraction ?? ""}`;
  let format = numberFormats.get(id);
  if (!format) {
    format = new Intl.NumberFormat(i18n.language, {
      notation: options.compact ? "compact" : "standard",
      maximumFractionDigits: options.maxFraction ?? (options.compact ? 1 : 3),
    });
    numberFormats.set(id, format);
  }
  return format.format(value);
}

/** A file size in the reader's language ("1.5 MB" / "1,5 МБ"), through Intl's units. */
export function formatBytes(bytes: number): string {
  const units = ["byte", "kilobyte", "megabyte", "gigabyte"] as const;
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const id = `${i18n.language}|unit|${units[unit]}`;
  let format = numberFormats.get(id);
  if (!format) {
    format = new Intl.NumberFormat(i18n.language, { style: "unit", unit: units[unit], unitDisplay: "short", maximumFractionDigits: unit ? 1 : 0 });
    numberFormats.set(id, format);
  }
  return format.format(value);
}
