// The media limits of the instance settings (OpenAPI: getInstanceSettings, updateInstanceSettings) as the
// settings screen edits them: what each governs, its default, the bytes shown in KiB or MiB, the accepted
// range checked before sending, and only the changed values sent. Pure functions, tested by Vitest; kept
// beside the chart arithmetic (scale.ts) because both turn bytes into words.

import { t, type Key } from "../../i18n/index.svelte";

export type LimitKey = "avatar_max_bytes" | "guild_image_max_bytes" | "emoji_max_bytes" | "sound_max_bytes" | "gallery_max_bytes";
export type MediaLimits = Record<LimitKey, number>;
export type SizeUnit = "KiB" | "MiB";

export const KIB = 1024;
export const MIB = 1024 * 1024;
/** Every limit accepts 1 KiB … 100 MiB (docs/reference: InstanceSettings). */
export const MIN_BYTES = KIB;
export const MAX_BYTES = 100 * MIB;

export interface LimitInfo {
  key: LimitKey;
  label: string;
  governs: string;
  defaultBytes: number;
}

/** A limit whose words are read from the catalogue each time they are shown (so they follow the language). */
function limit(key: LimitKey, label: Key, governs: Key, defaultBytes: number): LimitInfo {
  return {
    key,
    get label() { return t(label); },
    get governs() { return t(governs); },
    defaultBytes,
  };
}

export const LIMITS: LimitInfo[] = [
  limit("avatar_max_bytes", "admin.limits.avatarLabel", "admin.limits.avatarGoverns", 8 * MIB),
  limit("guild_image_max_bytes", "admin.limits.guildImageLabel", "admin.limits.guildImageGoverns", 8 * MIB),
  limit("emoji_max_bytes", "admin.limits.emojiLabel", "admin.limits.emojiGoverns", 512 * KIB),
  limit("sound_max_bytes", "admin.limits.soundLabel", "admin.limits.soundGoverns", 512 * KIB),
  limit("gallery_max_bytes", "admin.limits.galleryLabel", "admin.limits.galleryGoverns", MIB),
];

const FACTOR: Record<SizeUnit, number> = { KiB: KIB, MiB: MIB };

/** The unit a size reads best in: MiB from 1 MiB up, else KiB. */
export function unitFor(bytes: number): SizeUnit {
  return bytes >= MIB ? "MiB" : "KiB";
}

/** Bytes as a number of `unit`, with at most three decimals (0.5 MiB, 1536 KiB). */
export function toUnit(bytes: number, unit: SizeUnit): number {
  return Math.round((bytes / FACTOR[unit]) * 1000) / 1000;
}

/** A typed amount of `unit` as whole bytes; null when it is not a number. */
export function fromUnit(amount: number | string | null | undefined, unit: SizeUnit): number | null {
  if (amount === null || amount === undefined || amount === "") return null;
  const n = typeof amount === "number" ? amount : Number(String(amount).replace(",", "."));
  if (!Number.isFinite(n)) return null;
  return Math.round(n * FACTOR[unit]);
}

/** "8 MiB", "512 KiB", "1.5 MiB": a limit in words. */
export function limitWords(bytes: number): string {
  const unit = unitFor(bytes);
  return t("admin.size", { amount: toUnit(bytes, unit), unit });
}

/** Why a value would be refused, in words, or null when the service accepts it. */
export function limitProblem(bytes: number | null): string | null {
  if (bytes === null) return t("admin.limits.enterSize");
  if (bytes < MIN_BYTES) return t("admin.limits.tooSmall");
  if (bytes > MAX_BYTES) return t("admin.limits.tooLarge");

  return null;
}

/** Only the limits whose bytes differ from what the service has: the body of the PATCH. */
export function changedLimits(saved: MediaLimits, edited: Partial<Record<LimitKey, number | null>>): Partial<MediaLimits> {
  const out: Partial<MediaLimits> = {};
  for (const { key } of LIMITS) {
    const v = edited[key];
    if (v !== null && v !== undefined && v !== saved[key]) out[key] = v;
  }
  return out;
}
