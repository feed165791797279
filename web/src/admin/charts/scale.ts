// The arithmetic of the administration's charts (Stats.svelte and the chart components beside this file):
// a round top for an axis, its ticks, which date labels to draw so they never overlap, and numbers, dates
// and sizes in words. Pure functions, tested by Vitest.

import { formatDate, formatNumber } from "../../i18n/format";
import { t } from "../../i18n/index.svelte";

/** The smallest "round" number (1, 2, 2.5 or 5 times a power of ten) at or above `max`; at least 1. */
export function niceMax(max: number): number {
  if (!Number.isFinite(max) || max <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 2.5, 5, 10]) {
    const top = step * power;
    if (top >= max) return Math.max(1, Math.round(top));
  }
  return 10 * power;
}

/** Tick values from 0 to `niceMax(max)`: about `count` intervals, each a whole and round number (a step
 *  of 1000 rather than 1250). */
export function ticks(max: number, count = 4): number[] {
  const top = niceMax(max);
  let intervals = top;
  if (top > count) {
    const fits = [count, 5, 4, 2].filter((c) => top % c === 0);
    const digits = (c: number) => String(top / c).replace(/0+$/, "").length;
    intervals = fits.reduce((best, c) => (digits(c) < digits(best) ? c : best), fits[0] ?? 1);
  }
  const step = top / intervals;
  return Array.from({ length: intervals + 1 }, (_, i) => i * step);
}

/** Which of `n` x-axis labels to draw so that at most `room` fit: every k-th, counted back from the last
 *  (the newest day always carries its date). */
export function thinLabels(n: number, room: number): number[] {
  if (n <= 0) return [];
  const every = Math.max(1, Math.ceil(n / Math.max(1, room)));
  const shown: number[] = [];
  for (let i = n - 1; i >= 0; i -= every) shown.unshift(i);
  return shown;
}

/** An axis number in the shown language: 950, 1.2K, 3.4M (950, 1,2 тыс., 3,4 млн). */
export function compactNumber(n: number): string {
  return Math.abs(n) < 1000 ? formatNumber(n, { maxFraction: 2 }) : formatNumber(n, { compact: true });
}

/** A count in full, grouped in the shown language: 50,234 (50 234). */
export function fullNumber(n: number): string {
  return formatNumber(n);
}

const UNITS = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB"];

/** An amount of a binary unit in words ("1.5 MiB", "1,5 МиБ"). */
export function sizeWords(amount: number, unit: string): string {
  return t("admin.size", { amount, unit });
}

/** A size in binary units with at most one decimal: "512 KiB", "1.5 MiB", "1 byte". */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return "—";
  if (bytes < 1024) return t("admin.bytes", { count: Math.round(bytes), n: String(Math.round(bytes)) });
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const rounded = Math.round(value * 10) / 10;
  // 1023.96 KiB rounds up to 1024 KiB: say 1 MiB instead.
  if (rounded >= 1024 && unit < UNITS.length - 1) return sizeWords(1, UNITS[unit + 1]);
  return sizeWords(rounded, UNITS[unit]);
}

/** A calendar day of the service ("2025-01-31") as a moment at its noon UTC, which is the same calendar
 *  day in the reader's time zone (UTC−12 … UTC+12), so formatting it never moves it to a neighbour. */
function noonOf(day: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  return m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), 12)) : null;
}

/** "2025-01-31" → "Jan 31" / "31 янв." (the day as the service counted it). */
export function shortDate(day: string): string {
  const at = noonOf(day);
  return at ? formatDate(at, "dayMonth") : day;
}

/** "2025-01-31" → "Jan 31, 2025" / "31 янв. 2025 г.", for tables and accessible names. */
export function longDate(day: string): string {
  const at = noonOf(day);
  return at ? formatDate(at, "day") : day;
}


/** A label cut to `chars` characters with an ellipsis (SVG text does not wrap or clip by itself). */
export function clip(text: string, chars: number): string {
  const max = Math.max(2, Math.floor(chars));
  return text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`;
}

/** How many date labels fit along `width` pixels when each needs `each` pixels. */
export function labelRoom(width: number, each = 68): number {
  return Math.max(1, Math.floor(width / each));
}
