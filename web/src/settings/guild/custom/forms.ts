// What the emoji, sound and cosmetics screens share (docs/customisation.md): the limits, the checks made
// before a file is sent, the words for the interface sounds' events, and the multipart upload whose
// refusals come back in words.

import { api, ApiError, call, describe, type ErrorBody, errorText as failureText } from "../../../lib/api";
import { formatBytes } from "../../../lib/upload";
import type { PaletteEvent } from "../../../lib/types";
import { t, type Key } from "../../../i18n/index.svelte";

export const EMOJI_MAX_BYTES = 524288;
export const EMOJI_LIMIT = 100;
export const SOUND_MAX_BYTES = 524288;
export const SOUND_LIMIT = 30;
export const GALLERY_MAX_BYTES = 1048576;
export const GALLERY_LIMIT = 100;

export interface MediaLimits {
  emoji_max_bytes: number;
  sound_max_bytes: number;
  gallery_max_bytes: number;
  emojis_per_guild: number;
  soundboard_sounds_per_guild: number;
  interface_sounds_per_guild: number;
}

export const DEFAULT_LIMITS: MediaLimits = {
  emoji_max_bytes: EMOJI_MAX_BYTES, sound_max_bytes: SOUND_MAX_BYTES, gallery_max_bytes: GALLERY_MAX_BYTES,
  emojis_per_guild: EMOJI_LIMIT, soundboard_sounds_per_guild: SOUND_LIMIT, interface_sounds_per_guild: SOUND_LIMIT,
};

let limitsOnce: Promise<MediaLimits> | null = null;

/** The instance's own limits (OpenAPI: getMeta), since an operator may change the media sizes; the
 * defaults while they are read or when they cannot be. */
export function mediaLimits(): Promise<MediaLimits> {
  limitsOnce ??= call("getMeta").then(
    (meta) => ({ ...DEFAULT_LIMITS, ...meta.limits }),
    () => {
      limitsOnce = null;
      return DEFAULT_LIMITS;
    },
  );
  return limitsOnce;
}

/** The refusal of a file that is no image the server takes (415). */
export const IMAGE_REFUSAL: Key = "guild.custom.imageRefusal415";

export const EMOJI_NAME = /^[a-zA-Z0-9_]{2,32}$/;
export const IMAGE_TYPES = ["image/png", "image/jpeg", "image/webp", "image/gif"];
export const SOUND_TYPES = ["audio/mpeg", "audio/mp3", "audio/ogg", "audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave",
  "audio/webm", "audio/mp4", "audio/x-m4a", "audio/m4a"];

/** "512 KB", "1 MiB": limits as people read them (binary units, as the limits are set). */
export function limitWords(bytes: number): string {
  if (bytes >= 1048576 && bytes % 1048576 === 0) return t("guild.custom.sizeMB", { n: String(bytes / 1048576) });
  if (bytes >= 1024 && bytes % 1024 === 0) return t("guild.custom.sizeKB", { n: String(bytes / 1024) });
  return formatBytes(bytes);
}

/** Each interface event an interface sound may replace, with the key of its words, in the order the list
 * offers them. */
export const PALETTE_EVENTS: { id: PaletteEvent; key: Key }[] = [
  { id: "message", key: "guild.custom.event.message" },
  { id: "mention", key: "guild.custom.event.mention" },
  { id: "dm_message", key: "guild.custom.event.dmMessage" },
  { id: "voice_join", key: "guild.custom.event.voiceJoin" },
  { id: "voice_leave", key: "guild.custom.event.voiceLeave" },
  { id: "mute", key: "guild.custom.event.mute" },
  { id: "unmute", key: "guild.custom.event.unmute" },
  { id: "deafen", key: "guild.custom.event.deafen" },
  { id: "undeafen", key: "guild.custom.event.undeafen" },
  { id: "call_ring", key: "guild.custom.event.callRing" },
  { id: "call_end", key: "guild.custom.event.callEnd" },
  { id: "stream_start", key: "guild.custom.event.streamStart" },
  { id: "stream_end", key: "guild.custom.event.streamEnd" },
];

export function paletteLabel(id: string | null | undefined): string {
  return t(PALETTE_EVENTS.find((e) => e.id === id)?.key ?? "guild.custom.event.none");
}

/** A name for an upload made from its file name: what the emoji rule allows, else empty. */
export function nameFromFile(fileName: string, emoji: boolean): string {
  const stem = fileName.replace(/\.[^.]+$/, "");
  if (!emoji) return stem.trim().slice(0, 32);
  const cleaned = stem.replace(/[^a-zA-Z0-9_]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 32);
  return cleaned.length >= 2 ? cleaned : "";
}

/** Why an emoji name is refused, or "" when it is fine. */
export function emojiNameProblem(name: string): string {
  if (!name) return t("guild.custom.emojiNameMissing");
  if (name.length < 2 || name.length > 32) return t("guild.custom.emojiNameLength");
  if (!EMOJI_NAME.test(name)) return t("guild.custom.emojiNameChars");
  return "";
}

/** Why a file cannot be sent, checked before sending (the service checks again, by content). `what` is the
 * accepted kind in words ("an image", `t("guild.custom.imageTypes")`). */
export function fileProblem(file: { name: string; type: string; size: number }, types: string[], max: number, what: string): string {
  if (file.type && !types.includes(file.type.toLowerCase())) return t("guild.custom.fileWrongType", { name: file.name, what });
  if (file.size > max) return t("guild.custom.fileTooLarge", { name: file.name, size: formatBytes(file.size), limit: limitWords(max) });
  return "";
}

/** The refusals of an upload or a change, in words (the code decides; the service's text is the fallback). */
export function refusal(status: number, body: ErrorBody | null, words: Record<string, string> = {}): string {
  const code = body?.code ?? "";
  if (words[code]) return words[code];
  if (status === 413 || code === "file.too_large") return words["413"] ?? t("guild.custom.refusalTooLarge");
  if (status === 415 || code === "file.unsupported_type") return words["415"] ?? t("guild.custom.refusalType");
  if (code === "perm.denied") return t("guild.custom.refusalPermission");
  return describe(status, body);
}

/** A multipart upload (the file in the part `file`, the other values as form fields) to `/api/v1<path>`;
 * the answer's JSON. A 429 waits for Retry-After and tries again twice. */
export async function postForm<T>(path: string, file: File, fields: Record<string, string>,
  words: Record<string, string> = {}): Promise<T> {
  return api.upload<T>(path, file, {
    fields, retries: 2, maxWait: Infinity,
    reword: (envelope, status) => ({ ...envelope, message: refusal(status, envelope, words) }),
  });
}

/** The refusal of a JSON call in words (an ApiError's message is already in words; some codes say more). */
export function errorText(err: unknown, words: Record<string, string> = {}): string {
  if (err instanceof ApiError && words[err.code]) return words[err.code];
  return failureText(err);
}

/** "1.2 s", "850 ms". */
export function durationWords(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "";
  if (ms < 1000) return t("guild.custom.durationMs", { n: ms });
  return t(ms < 10000 ? "guild.custom.durationTenths" : "guild.custom.durationSeconds", { n: ms / 1000 });
}
