// Attachment uploads (OpenAPI: uploadAttachment): one multipart request per file through
// XMLHttpRequest, whose upload events give the progress bar; refusals become sentences.

import { call, describe, type ErrorBody, MAX_SILENT_WAIT, operationPath } from "./api";
import type { FileObject, Id } from "./types";
import { i18n, t } from "../i18n/index.svelte";
import { formatNumber } from "../i18n/format";

/** At most this many files go with one message. */
export const MAX_ATTACHMENTS = 10;

export class UploadError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** "1.4 MB", "820 KB", "12 bytes". */
export function formatBytes(n: number): string {
  if (n < 1000) return t("shell.upload.bytes", { count: n });
  const units = ["shell.upload.kb", "shell.upload.mb", "shell.upload.gb", "shell.upload.tb"] as const;
  let value = n / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return t(units[unit], { size: value < 10 ? oneDecimal(value) : formatNumber(Math.round(value)) });
}

/** 1.5 / 1,5: one decimal always, in the shown language. */
function oneDecimal(value: number): string {
  return new Intl.NumberFormat(i18n.language, { minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(value);
}

/** A size limit as the operator set it: "25 MiB", "512 KiB", "879 KiB" (binary units, as the limits are). */
export function limitWords(bytes: number): string {
  const MiB = 1048576;
  if (bytes >= MiB) return t("shell.upload.mib", { size: bytes % MiB === 0 ? formatNumber(bytes / MiB) : oneDecimal(bytes / MiB) });
  if (bytes >= 1024) return t("shell.upload.kib", { size: formatNumber(Math.round(bytes / 1024)) });
  return t("shell.upload.bytes", { count: bytes });
}

let limitOnce: Promise<number | null> | null = null;

/** The instance's largest upload (OpenAPI: getMeta `limits.max_upload_size`), asked once; null when unknown. */
export function uploadLimit(): Promise<number | null> {
  limitOnce ??= call("getMeta").then(
    (meta) => meta.limits?.max_upload_size ?? null,
    () => {
      limitOnce = null;
      return null;
    },
  );
  return limitOnce;
}

/** A refusal of the upload in words, naming the file (and the limit, when known). One sentence: the
 * service's own message says the same and is not repeated. */
export function uploadErrorText(name: string, status: number, body: ErrorBody | null, limit: number | null = null): string {
  if (status === 413 || body?.code === "file.too_large") {
    return limit ? t("shell.upload.tooLargeLimit", { name, limit: limitWords(limit) }) : t("shell.upload.tooLarge", { name });
  }
  if (status === 415 || body?.code === "file.unsupported_type") return t("shell.upload.unsupported", { name });
  if (status === 403) return t("shell.upload.forbidden");
  return t("shell.upload.failed", { name, reason: describe(status, body) });
}

export interface UploadHandle {
  done: Promise<FileObject>;
  abort: () => void;
}

type Sleep = (ms: number) => Promise<void>;
const sleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends one file to the room; `onProgress` gets the fraction sent (0..1). A 429 is waited out and tried
 * again only while the waits add up to MAX_SILENT_WAIT seconds at most (as api.ts does); a longer
 * Retry-After fails at once in words, and the tray offers to try again. */
export function uploadAttachment(channelId: Id, file: File, onProgress: (fraction: number) => void,
  onWait?: (seconds: number) => void): UploadHandle {
  let xhr: XMLHttpRequest | null = null;
  let aborted = false;

  const once = () =>
    new Promise<{ status: number; body: unknown; retryAfter: number }>((resolve, reject) => {
      const request = new XMLHttpRequest();
      xhr = request;
      request.open("POST", `/api/v1${operationPath("uploadAttachment", { channel_id: channelId })}`);
      request.responseType = "json";
      request.setRequestHeader("Accept", "application/json");
      request.upload.onprogress = (e) => {
        if (e.lengthComputable && e.total > 0) onProgress(e.loaded / e.total);
      };
      request.onload = () =>
        resolve({ status: request.status, body: request.response, retryAfter: Number(request.getResponseHeader("Retry-After")) });
      request.onerror = () => reject(new UploadError(0, "network", t("shell.upload.failed", { name: file.name, reason: describe(0, null) })));
      request.onabort = () => reject(new UploadError(0, "aborted", t("shell.upload.cancelled", { name: file.name })));
      const form = new FormData();
      form.append("file", file, file.name);
      request.send(form);
    });

  const done = (async () => {
    // Over the limit: refused here, in the same words, without sending the bytes.
    const limit = await uploadLimit();
    if (limit !== null && file.size > limit) throw new UploadError(413, "file.too_large", uploadErrorText(file.name, 413, null, limit));
    let waited = 0;
    for (let attempt = 0; ; attempt++) {
      if (aborted) throw new UploadError(0, "aborted", t("shell.upload.cancelled", { name: file.name }));
      const { status, body, retryAfter } = await once();
      if (status === 201 || status === 200) {
        onProgress(1);
        return (body as { file: FileObject }).file;
      }
      const error = body && typeof body === "object" && "error" in body ? (body as { error: ErrorBody }).error : null;
      const seconds = retryAfter > 0 ? retryAfter : Math.max(1, Math.ceil(error?.retry_after ?? 1));
      if (status === 429 && attempt < 3 && waited + seconds <= MAX_SILENT_WAIT) {
        waited += seconds;
        onWait?.(seconds);
        await sleep(seconds * 1000);
        onProgress(0);
        continue;
      }
      throw new UploadError(status, error?.code ?? "http", uploadErrorText(file.name, status, error, limit));
    }
  })();

  return {
    done,
    abort: () => {
      aborted = true;
      xhr?.abort();
    },
  };
}

/** A file on its way to a message, as the composer's tray shows it. */
export interface TrayItem {
  key: string;
  source: File;
  name: string;
  size: number;
  /** A blob: URL of an image to preview, else null. */
  preview: string | null;
  progress: number;
  status: "uploading" | "done" | "failed";
  error: string | null;
  file: FileObject | null;
  abort: () => void;
}

export function isPreviewable(file: { type: string }): boolean {
  return /^image\/(png|jpeg|gif|webp|avif|bmp)$/.test(file.type);
}
