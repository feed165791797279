// The media limits of the instance settings (OpenAPI: getInstanceSettings, updateInstanceSettings) as the
// settings screen edits them: what each governs, its default, the bytes shown in KiB or MiB, the accepted
// range checked before sending, and only the changed values sent. Pure functions, tested by Vitest; kept
// beside the chart arithmetic (scale.ts) because both turn bytes into words.

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

export const LIMITS: LimitInfo[] = [
  { key: "avatar_max_bytes", label: "Avatars", governs: "User avatars, webhook avatars and group conversation icons.", defaultBytes: 8 * MIB },
  {
    key: "guild_image_max_bytes",
    label: "Server images",
    governs: "Server icons, banners and splash images, room backgrounds and invitation backgrounds.",
    defaultBytes: 8 * MIB,
  },
  { key: "emoji_max_bytes", label: "Custom emoji", governs: "Each custom emoji image uploaded to a server.", defaultBytes: 512 * KIB },
  { key: "sound_max_bytes", label: "Sounds", governs: "Soundboard and interface sounds uploaded to a server.", defaultBytes: 512 * KIB },
  { key: "gallery_max_bytes", label: "Cosmetics gallery", governs: "Frames and icons of a server's cosmetics gallery.", defaultBytes: MIB },
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
  return `${toUnit(bytes, unit)} ${unit}`;
}

/** Why a value would be refused, in words, or null when the service accepts it. */
export function limitProblem(bytes: number | null): string | null {
  if (bytes === null) return "Enter a size.";
  if (bytes < MIN_BYTES) return "The smallest limit is 1 KiB.";
  if (bytes > MAX_BYTES) return "The largest limit is 100 MiB.";
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
