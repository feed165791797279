// What the emoji, sound and cosmetics screens share (docs/customisation.md): the limits, the checks made
// before a file is sent, the words for the interface sounds' events, and the multipart upload whose
// refusals come back in words.

import { api, ApiError, call, describe, type ErrorBody, errorText as failureText } from "../../../lib/api";
import { formatBytes } from "../../../lib/upload";
import type { PaletteEvent } from "../../../lib/types";

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

export const EMOJI_NAME = /^[a-zA-Z0-9_]{2,32}$/;
export const IMAGE_TYPES = ["image/png", "image/jpeg", "image/webp", "image/gif"];
export const SOUND_TYPES = ["audio/mpeg", "audio/mp3", "audio/ogg", "audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave",
  "audio/webm", "audio/mp4", "audio/x-m4a", "audio/m4a"];

/** "512 KB", "1 MiB": limits as people read them (binary units, as the limits are set). */
export function limitWords(bytes: number): string {
  if (bytes >= 1048576 && bytes % 1048576 === 0) return `${bytes / 1048576} MB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KB`;
  return formatBytes(bytes);
}

/** Each interface event an interface sound may replace, in words, in the order the list offers them. */
export const PALETTE_EVENTS: { id: PaletteEvent; label: string }[] = [
  { id: "message", label: "A message arrives" },
  { id: "mention", label: "Someone mentions you" },
  { id: "dm_message", label: "A direct message arrives" },
  { id: "voice_join", label: "Someone joins your voice room" },
  { id: "voice_leave", label: "Someone leaves your voice room" },
  { id: "mute", label: "You mute your microphone" },
  { id: "unmute", label: "You unmute your microphone" },
  { id: "deafen", label: "You turn your sound off" },
  { id: "undeafen", label: "You turn your sound back on" },
  { id: "call_ring", label: "A call rings" },
  { id: "call_end", label: "A call ends" },
  { id: "stream_start", label: "Someone starts sharing their screen" },
  { id: "stream_end", label: "Someone stops sharing their screen" },
];

export function paletteLabel(id: string | null | undefined): string {
  return PALETTE_EVENTS.find((e) => e.id === id)?.label ?? "No event";
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
  if (!name) return "Give the emoji a name.";
  if (name.length < 2 || name.length > 32) return "An emoji name is 2 to 32 characters long.";
  if (!EMOJI_NAME.test(name)) return "An emoji name may use only letters, digits and the underscore (_).";
  return "";
}

/** Why a file cannot be sent, checked before sending (the service checks again, by content). */
export function fileProblem(file: { name: string; type: string; size: number }, types: string[], max: number, what: string): string {
  if (file.type && !types.includes(file.type.toLowerCase())) return `${file.name} is not ${what}.`;
  if (file.size > max) return `${file.name} is ${formatBytes(file.size)}; the most this server accepts is ${limitWords(max)}.`;
  return "";
}

/** The refusals of an upload or a change, in words (the code decides; the service's text is the fallback). */
export function refusal(status: number, body: ErrorBody | null, words: Record<string, string> = {}): string {
  const code = body?.code ?? "";
  if (words[code]) return words[code];
  if (status === 413 || code === "file.too_large") return words["413"] ?? "That file is larger than this server accepts.";
  if (status === 415 || code === "file.unsupported_type") return words["415"] ?? "The server does not accept this type of file: its content must match its type.";
  if (code === "perm.denied") return "You no longer have the permission to do this here.";
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
  if (ms < 1000) return `${ms} ms`;
  return `${(ms / 1000).toFixed(ms < 10000 ? 1 : 0)} s`;
}
