// REST calls to the service (docs/client.md): same-origin fetch carrying the session cookie, never a
// token kept by the client; every error envelope becomes an ApiError whose message is shown in words;
// a 429 whose Retry-After is short is waited out and tried again, a longer one is an error the screen
// shows (a lockout of 15 minutes never freezes a form). A message send that got no answer is tried
// again with its nonce (`resend`): the server answers a repeat with the first message, so a retry can
// never post it twice.

import type { operations } from "./generated/openapi";
import { OPERATIONS, type OperationId } from "./generated/operations";
import { i18n, t, tMaybe } from "../i18n/index.svelte";
import { formatDate } from "../i18n/format";

export interface ErrorBody {
  code: string;
  message: string;
  details?: { field: string; message: string }[];
  retry_after?: number;
  /** The rate-limit bucket of a 429 (`auth.lockout`: sign-in attempts, docs/architecture.md). */
  bucket?: string;
  hint?: string;
  /** Set by the client when a screen reworded the message (`reword`): the message is then the client's
   * own words, shown as they are rather than the text of the code. */
  own?: boolean;
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
  /** On a 429 (or a 503 that says): seconds until the request may be tried again (the screen offers
   * to, counting down). */
  readonly retryAfter: number | null;
  readonly bucket: string | null;
  /** The envelope as said (with the wait it was given), so its words can be said again in another language. */
  readonly body: ErrorBody;

  constructor(status: number, body: ErrorBody, retryAfter: number | null = null) {
    const said = retryAfter === null ? body : { ...body, retry_after: retryAfter };
    super(describe(status, said));
    this.body = said;
    this.status = status;
    this.code = body.code;
    this.details = body.details ?? [];
    this.hint = body.hint ?? null;
    this.retryAfter = retryAfter ?? (status === 429 && body.retry_after !== undefined ? body.retry_after : null);
    this.bucket = body.bucket ?? null;
  }
}

/** The words of any failure a screen shows: an ApiError's (the envelope in words) or another Error's
 * message, else the thrown value itself. */
export function errorText(err: unknown): string {
  // A refusal of the service is said again in the language shown now (it may have changed since).
  if (err instanceof ApiError) return describe(err.status, err.body);
  return err instanceof Error ? err.message : String(err);
}

/** "in 15 minutes", "in 1 minute", "in 40 seconds": a wait in words, rounded up. */
export function inTime(seconds: number): string {
  const s = Math.max(1, Math.ceil(seconds));
  if (s < 60) return t("errors.wait.seconds", { count: s });
  return t("errors.wait.minutes", { count: Math.ceil(s / 60) });
}

/** The words of a sign-in lockout (or any sign-in rate limit) with the time left (and, in Russian, the
 * clock time it ends, in the reader's zone). */
export function lockoutWords(seconds: number, now: number = Date.now()): string {
  return t("errors.lockout", { wait: inTime(seconds), time: formatDate(now + Math.ceil(seconds) * 1000, "time") });
}

/** The words of one error code in the shown language: the client's own text for the code, else the
 * service's message. English is the service's own language, so there its message (which may say more
 * than the code, "This file type is not allowed: image/x") is shown as it came. */
function codeWords(body: ErrorBody, status: number): string {
  if (body.own && body.message) return body.message;
  const own = body.message && i18n.language === "en" ? null : tMaybe(`errors.${body.code}`, { status }); // i18n-keys: errors.
  return own ?? (body.message || t("errors.http", { status }));
}

/** The envelope in words: the text of its code (or the service's message), the first field detail of a
 * validation failure. */
export function describe(status: number, body: ErrorBody | null): string {
  if (!body) return status === 0 ? t("errors.network") : t("errors.http", { status });
  if (body.code === "validation.failed" && body.details?.length) {
    const d = body.details[0];
    return d.field && d.field !== "body" ? t("errors.fieldDetail", { field: humanField(d.field), message: d.message }) : d.message;
  }
  if (body.code === "rate_limited" && body.retry_after !== undefined) {
    if (body.bucket === "auth.lockout") return lockoutWords(body.retry_after);
    return t("errors.tooManyRequests", { wait: inTime(body.retry_after) });
  }
  if (body.code === "auth.2fa_enrollment_required" && body.hint) {
    return t("errors.enrollmentHint", { message: codeWords(body, status).replace(/\.$/, ""), hint: body.hint });
  }
  const words = body.message || body.code ? codeWords(body, status) : t("errors.http", { status });
  if (body.hint) return `${words} ${body.hint}`;
  return words;
}

/** A field of a validation detail in words: the client's name for it, else its own name made readable. */
function humanField(field: string): string {
  const own = tMaybe(`errors.field.${field}`); // i18n-keys: errors.
  if (own) return own;
  const words = field.replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export interface RequestOptions {
  method?: string;
  /** JSON, or a FormData sent as multipart (`upload`). */
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  /** How many 429 answers to wait out before giving up (default 3), each only while the waits add up to
   * no more than MAX_SILENT_WAIT seconds; a longer Retry-After is thrown at once as an ApiError whose
   * `retryAfter` the screen shows. */
  retries?: number;
  /** How many seconds the 429 waits may add up to before the refusal is thrown (default MAX_SILENT_WAIT). */
  maxWait?: number;
  /** Rewords a refusal's envelope before it is thrown (an upload says which file the server refused). */
  reword?: (envelope: ErrorBody, status: number) => ErrorBody;
  /** Told how long the client waits on a 429 before it tries again. */
  onWait?: (seconds: number) => void;
  signal?: AbortSignal;
  /** Milliseconds after which an unanswered request is given up, as an ApiError of status 0 and code
   * `timeout` (the request may still have been carried out). */
  timeout?: number;
}

type Fetch = typeof fetch;
type Sleep = (ms: number) => Promise<void>;

let fetchImpl: Fetch = (...args) => fetch(...args);
let sleepImpl: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let nowImpl: () => number = () => Date.now();
let randomImpl: () => number = () => Math.random();
let unauthorizedHandler: (() => void) | null = null;

/** Tests replace the network and the clock. */
export function configure(options: { fetch?: Fetch; sleep?: Sleep; now?: () => number; random?: () => number }): void {
  if (options.fetch) fetchImpl = options.fetch;
  if (options.sleep) sleepImpl = options.sleep;
  if (options.now) nowImpl = options.now;
  if (options.random) randomImpl = options.random;
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
  const { method = "GET", body, query, retries = 3, maxWait = MAX_SILENT_WAIT, onWait, timeout } = options;
  const reword = (envelope: ErrorBody, status: number): ErrorBody => {
    const out = options.reword ? options.reword(envelope, status) : envelope;
    return out.message !== envelope.message ? { ...out, own: true } : out;
  };
  let signal = options.signal;
  let timedOut = false;
  if (timeout !== undefined) {
    const controller = new AbortController();
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeout);
    // Removed in `finally`: a caller's signal may outlive many requests (a view's), and would keep every one.
    const onAbort = () => controller.abort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    signal = controller.signal;
    try {
      return await request<T>(path, { ...options, signal, timeout: undefined });
    } catch (err) {
      if (timedOut && (err as Error).name === "AbortError") {
        throw new ApiError(0, { code: "timeout", message: t("errors.timeout") });
      }
      throw err;
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
    }
  }
  let url = `/api/v1${path}`;
  if (query) {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
    const text = params.toString();
    if (text) url += `?${text}`;
  }
  const init: RequestInit = { method, credentials: "same-origin", headers: { Accept: "application/json" }, signal };
  if (body instanceof FormData) {
    init.body = body;
  } else if (body !== undefined) {
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
      if (attempt < retries && waited + seconds <= maxWait) {
        waited += seconds;
        onWait?.(seconds);
        await sleepImpl(seconds * 1000);
        continue;
      }
      throw new ApiError(429, reword(error ?? { code: "rate_limited", message: t("errors.rate_limited") }, 429), seconds);
    }
    const envelope = reword(error ?? { code: "http", message: describe(response.status, null) }, response.status);
    if (envelope.code === "auth.unauthorized") unauthorizedHandler?.();
    const unavailableFor = response.status === 503 && response.headers.get("Retry-After") ? retryAfterSeconds(response, error) : null;
    throw new ApiError(response.status, envelope, unavailableFor);
  }
}

// ---- resending a message (docs/client.md "Reconnects and resends") ------------------------------------

/** How long a send keeps being tried by itself before it shows as failed (Retry and Discard). */
export const RESEND_BUDGET_MS = 60000;
/** An attempt that gets no answer this long is taken for lost (a node that died holding it). */
export const SEND_TIMEOUT_MS = 15000;
/** The longest pause between two attempts without a Retry-After. */
export const RESEND_MAX_DELAY_MS = 8000;

/** Whether a failed send may be tried again with the same nonce: no answer (network, timeout), a
 * gateway or proxy that lost the node (502, 504), a service that says it is unavailable (503) or a
 * request timeout (408) or rate limit (429). Any other refusal is the server's considered answer. */
export function resendable(err: unknown): boolean {
  if (!(err instanceof ApiError)) return false;
  return err.status === 0 || [408, 429, 502, 503, 504].includes(err.status);
}

/** The pause before attempt `attempt + 1` (ms): the server's Retry-After when it gave one, otherwise
 * doubling from 1 s up to RESEND_MAX_DELAY_MS with jitter, so a node's clients do not return in step. */
export function resendDelay(attempt: number, retryAfter: number | null, random: number): number {
  if (retryAfter !== null && retryAfter > 0) return Math.ceil(retryAfter * 1000);
  const base = Math.min(RESEND_MAX_DELAY_MS, 1000 * 2 ** attempt);
  return Math.round(base / 2 + (base / 2) * random);
}

/** Waits that only lack a connection (no Retry-After to honour) end early when it comes back. */
const wakers = new Set<() => void>();

/** The connection is back (the gateway is ready again, the browser is online): sends waiting on a
 * network failure try again now. */
export function wakeResends(): void {
  for (const wake of [...wakers]) wake();
}

function pause(ms: number, wakeable: boolean): Promise<void> {
  if (!wakeable) return sleepImpl(ms);
  return new Promise<void>((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      wakers.delete(finish);
      resolve();
    };
    wakers.add(finish);
    void sleepImpl(ms).then(finish);
  });
}

export interface ResendOptions {
  /** True when the send no longer needs an answer (its MESSAGE_CREATE came, or it was discarded). */
  settled?: () => boolean;
  /** Told before each pause: the attempt that failed (0-based), the pause and why. */
  onRetry?: (info: { attempt: number; delayMs: number; error: ApiError }) => void;
  budgetMs?: number;
}

/** Runs `attempt` (one POST carrying the message's nonce) until it is answered, tried again while the
 * failure is `resendable` and RESEND_BUDGET_MS has not passed. Resolves with the answer, or null when
 * `settled` said to stop; rejects with the last error otherwise. A Retry-After longer than what is
 * left of the budget is not waited out: the message shows as failed at once, with the server's words. */
export async function resend<T>(attempt: () => Promise<T>, options: ResendOptions = {}): Promise<T | null> {
  const { settled = () => false, onRetry, budgetMs = RESEND_BUDGET_MS } = options;
  const deadline = nowImpl() + budgetMs;
  for (let n = 0; ; n++) {
    if (settled()) return null;
    try {
      return await attempt();
    } catch (err) {
      if (settled()) return null;
      if (!resendable(err)) throw err;
      const error = err as ApiError;
      const delayMs = resendDelay(n, error.retryAfter, randomImpl());
      if (nowImpl() + delayMs > deadline) throw err;
      onRetry?.({ attempt: n, delayMs, error });
      await pause(delayMs, error.status === 0);
    }
  }
}

/** A multipart upload to `path`: the `file` part (named `name`, else the file's own name) after the form
 * `fields`; the answer's JSON, refusals as ApiErrors like any call (`reword` says them for the file). */
export function upload<T>(path: string, file: Blob, options: RequestOptions & { name?: string; fields?: Record<string, string> } = {}): Promise<T> {
  const { name, fields = {}, ...rest } = options;
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append("file", file, name ?? (file instanceof File ? file.name : "blob"));
  return request<T>(path, { ...rest, method: "POST", body: form });
}

// ---- the typed call (docs/client.md "Calling the server") ---------------------------------------------

/** The operations of the REST interface (under /api/v1), which `call` reaches; the pages are not. */
export type ApiOperationId = {
  [K in OperationId]: (typeof OPERATIONS)[K][1] extends `/api/v1/${string}` ? K : never;
}[OperationId];

type Operation<K extends ApiOperationId> = operations[K];

/** `{ [key]: T }`, optional when T may be undefined, refused when the operation has none. */
type Part<Key extends string, T> = [NonNullable<T>] extends [never]
  ? { [P in Key]?: never }
  : undefined extends T
    ? { [P in Key]?: NonNullable<T> }
    : { [P in Key]: T };

type JsonBody<O> = O extends { requestBody?: infer R }
  ? [NonNullable<R>] extends [never]
    ? never
    : NonNullable<R> extends { content: { "application/json": infer B } }
      ? B | (undefined extends R ? undefined : never)
      : never
  : never;

/** What a call of operation K sends: its path parameters, its query, its JSON body. */
export type CallArgs<K extends ApiOperationId> = Part<"path", Operation<K>["parameters"]["path"]> &
  Part<"query", Operation<K>["parameters"]["query"]> &
  Part<"body", JsonBody<Operation<K>>>;

/** The JSON body operation K takes (a form's fields are built as this). */
export type CallBody<K extends ApiOperationId> = NonNullable<JsonBody<Operation<K>>>;

type SuccessStatus = 200 | 201 | 202 | 203 | 204 | 206;
type JsonOf<R> = R extends { content: { "application/json": infer J } } ? J : undefined;

/** What operation K answers on success: its JSON, or undefined for an answer without a body (204). */
export type CallAnswer<K extends ApiOperationId> = {
  [S in keyof Operation<K>["responses"]]: S extends SuccessStatus ? JsonOf<Operation<K>["responses"][S]> : never;
}[keyof Operation<K>["responses"]];

export type CallOptions = Omit<RequestOptions, "method" | "body" | "query">;

/** The operation's path with its parameters filled in, each URL-encoded, without the /api/v1 prefix that
 * `request` adds. */
export function operationPath(op: ApiOperationId, params: Record<string, string | number> = {}): string {
  return OPERATIONS[op][1].slice("/api/v1".length).replace(/\{(\w+)\}/g, (_, name: string) => {
    if (params[name] === undefined) throw new Error(`${op}: the path parameter ${name} is missing`);
    return encodeURIComponent(String(params[name]));
  });
}

/** Calls one operation of the interface by its operationId, the path, query, body and answer typed from
 * the generated document; `args` may be left out when the operation needs none of them. */
export function call<K extends ApiOperationId>(
  op: K,
  ...rest: {} extends CallArgs<K> ? [args?: CallArgs<K>, options?: CallOptions] : [args: CallArgs<K>, options?: CallOptions]
): Promise<CallAnswer<K>> {
  const [args = {}, options = {}] = rest;
  const { path, query, body } = args as { path?: Record<string, string | number>; query?: object; body?: unknown };
  return request<CallAnswer<K>>(operationPath(op, path), {
    ...options,
    method: OPERATIONS[op][0],
    body,
    query: query as RequestOptions["query"],
  });
}

/** Multipart uploads; every JSON call is `call`. */
export const api = { upload };
