// REST calls to the service (docs/client.md): same-origin fetch carrying the session cookie, never a
// token kept by the client; every error envelope becomes an ApiError whose message is shown in words;
// a 429 waits for Retry-After and tries again.

export interface ErrorBody {
  code: string;
  message: string;
  details?: { field: string; message: string }[];
  retry_after?: number;
  hint?: string;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: { field: string; message: string }[];
  /** What to do about it, when the service says (an administrator without 2FA: the command to run). */
  readonly hint: string | null;

  constructor(status: number, body: ErrorBody) {
    super(describe(status, body));
    this.status = status;
    this.code = body.code;
    this.details = body.details ?? [];
    this.hint = body.hint ?? null;
  }
}

/** The envelope in words: the service's message, the first field detail of a validation failure. */
export function describe(status: number, body: ErrorBody | null): string {
  if (!body) return status === 0 ? "The server could not be reached. Check your connection." : `The server answered ${status}.`;
  if (body.code === "validation.failed" && body.details?.length) {
    const d = body.details[0];
    return d.field && d.field !== "body" ? `${humanField(d.field)}: ${d.message}` : d.message;
  }
  if (body.code === "rate_limited" && body.retry_after !== undefined) {
    return `${body.message} Try again in ${Math.ceil(body.retry_after)} s.`;
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
  /** How many 429 answers to wait out before giving up (default 3). */
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
    if (response.status === 429 && attempt < retries) {
      const seconds = retryAfterSeconds(response, error);
      onWait?.(seconds);
      await sleepImpl(seconds * 1000);
      continue;
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
