// REST calls to the service (docs/client.md): same-origin fetch carrying the session cookie, never a
// token kept by the client; every error envelope becomes an ApiError whose message is shown in words;
// a 429 whose Retry-After is short is waited out and tried again, a longer one is an error the screen
// shows (a lockout of 15 minutes never freezes a form).

export interface ErrorBody {
  code: string;
  message: string;
  details?: { field: string; message: string }[];
  retry_after?: number;
  /** The rate-limit bucket of a 429 (`auth.lockout`: sign-in attempts, docs/architecture.md). */
  bucket?: string;
  hint?: string;
}

/** The longest the client waits on 429s, in all, before it tries a request again by itself (seconds):
 * longer than this and the screen is told, with the time left, instead of a form that freezes. */
export const MAX_SILENT_WAIT = 5;

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: { field: string; message: string }[];
  /** What to do about it, when the service says (an administrator without 2FA: the command to run). */
  readonly hint: string | null;
  /** On a 429: seconds until the request may be tried again (the screen offers to, counting down). */
  readonly retryAfter: number | null;
  readonly bucket: string | null;

  constructor(status: number, body: ErrorBody, retryAfter: number | null = null) {
    super(describe(status, retryAfter === null ? body : { ...body, retry_after: retryAfter }));
    this.status = status;
    this.code = body.code;
    this.details = body.details ?? [];
    this.hint = body.hint ?? null;
    this.retryAfter = retryAfter ?? (status === 429 && body.retry_after !== undefined ? body.retry_after : null);
    this.bucket = body.bucket ?? null;
  }
}

/** "in 15 minutes", "in 1 minute", "in 40 seconds": a wait in words, rounded up. */
export function inTime(seconds: number): string {
  const s = Math.max(1, Math.ceil(seconds));
  if (s < 60) return `in ${s} ${s === 1 ? "second" : "seconds"}`;
  const m = Math.ceil(s / 60);
  return `in ${m} ${m === 1 ? "minute" : "minutes"}`;
}

/** The words of a sign-in lockout (or any sign-in rate limit) with the time left. */
export function lockoutWords(seconds: number): string {
  return `Too many attempts. Try again ${inTime(seconds)}.`;
}

/** The envelope in words: the service's message, the first field detail of a validation failure. */
export function describe(status: number, body: ErrorBody | null): string {
  if (!body) return status === 0 ? "The server could not be reached. Check your connection." : `The server answered ${status}.`;
  if (body.code === "validation.failed" && body.details?.length) {
    const d = body.details[0];
    return d.field && d.field !== "body" ? `${humanField(d.field)}: ${d.message}` : d.message;
  }
  if (body.code === "rate_limited" && body.retry_after !== undefined) {
    if (body.bucket === "auth.lockout") return lockoutWords(body.retry_after);
    return `Too many requests: this was not done. Try again ${inTime(body.retry_after)}.`;
  }
  if (body.code === "auth.2fa_enrollment_required" && body.hint) {
    return `${body.message.replace(/\.$/, "")}. The operator sets it up on the server with: ${body.hint}`;
  }
  if (body.hint) return `${body.message || `The server answered ${status}.`} ${body.hint}`;
  return body.message || `The server answered ${status}.`;
}

function humanField(field: string): string {
  const words = field.replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export interface RequestOptions {
  method?: string;
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  /** How many 429 answers to wait out before giving up (default 3), each only while the waits add up to
   * no more than MAX_SILENT_WAIT seconds; a longer Retry-After is thrown at once as an ApiError whose
   * `retryAfter` the screen shows. */
  retries?: number;
  /** Told how long the client waits on a 429 before it tries again. */
  onWait?: (seconds: number) => void;
  signal?: AbortSignal;
}

type Fetch = typeof fetch;
type Sleep = (ms: number) => Promise<void>;

let fetchImpl: Fetch = (...args) => fetch(...args);
let sleepImpl: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let unauthorizedHandler: (() => void) | null = null;

/** Tests replace the network and the clock. */
export function configure(options: { fetch?: Fetch; sleep?: Sleep }): void {
  if (options.fetch) fetchImpl = options.fetch;
  if (options.sleep) sleepImpl = options.sleep;
}

/** Called when the session is gone (`auth.unauthorized`): the client returns to sign-in. */
export function onUnauthorized(handler: () => void): void {
  unauthorizedHandler = handler;
}

export function retryAfterSeconds(response: Response, body: ErrorBody | null): number {
  const header = Number(response.headers.get("Retry-After"));
  if (Number.isFinite(header) && header > 0) return header;
  return Math.max(1, Math.ceil(body?.retry_after ?? 1));
}

export async function request<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const { method = "GET", body, query, retries = 3, onWait, signal } = options;
  let url = `/api/v1${path}`;
  if (query) {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
    const text = params.toString();
    if (text) url += `?${text}`;
  }
  const init: RequestInit = { method, credentials: "same-origin", headers: { Accept: "application/json" }, signal };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { ...init.headers, "Content-Type": "application/json" };
  }
  let waited = 0;
  for (let attempt = 0; ; attempt++) {
    let response: Response;
    try {
      response = await fetchImpl(url, init);
    } catch (err) {
      if ((err as Error).name === "AbortError") throw err;
      throw new ApiError(0, { code: "network", message: describe(0, null) });
    }
    if (response.status === 204) return undefined as T;
    const parsed = await response.json().catch(() => null);
    if (response.ok) return parsed as T;
    const error: ErrorBody | null = parsed && typeof parsed === "object" && "error" in parsed ? parsed.error : null;
    if (response.status === 429) {
      const seconds = retryAfterSeconds(response, error);
      if (attempt < retries && waited + seconds <= MAX_SILENT_WAIT) {
        waited += seconds;
        onWait?.(seconds);
        await sleepImpl(seconds * 1000);
        continue;
      }
      throw new ApiError(429, error ?? { code: "rate_limited", message: "Too many requests" }, seconds);
    }
    const envelope = error ?? { code: "http", message: describe(response.status, null) };
    if (envelope.code === "auth.unauthorized") unauthorizedHandler?.();
    throw new ApiError(response.status, envelope);
  }
}

export const api = {
  get: <T>(path: string, options: RequestOptions = {}) => request<T>(path, { ...options, method: "GET" }),
  post: <T>(path: string, body?: unknown, options: RequestOptions = {}) =>
    request<T>(path, { ...options, method: "POST", body }),
  patch: <T>(path: string, body?: unknown, options: RequestOptions = {}) =>
    request<T>(path, { ...options, method: "PATCH", body }),
  put: <T>(path: string, body?: unknown, options: RequestOptions = {}) =>
    request<T>(path, { ...options, method: "PUT", body }),
  del: <T>(path: string, options: RequestOptions = {}) => request<T>(path, { ...options, method: "DELETE" }),
};
