// Uploads wait out a 429 by themselves only briefly (as api.ts does); a long Retry-After fails at once in
// words, so the tray says so and offers to try again instead of sitting silent for minutes.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { uploadAttachment } from "../src/lib/upload";

type Answer = { status: number; retryAfter: number; body: unknown };

function fakeXhr(answers: Answer[], sent: { count: number }) {
  return class {
    status = 0;
    response: unknown = null;
    responseType = "";
    upload = { onprogress: null as unknown };
    onload: (() => void) | null = null;
    onerror: (() => void) | null = null;
    onabort: (() => void) | null = null;
    private retryAfter = 0;
    open() {}
    setRequestHeader() {}
    abort() {}
    getResponseHeader(name: string) {
      return name === "Retry-After" && this.retryAfter ? String(this.retryAfter) : null;
    }
    send() {
      const answer = answers[Math.min(sent.count, answers.length - 1)];
      sent.count += 1;
      this.status = answer.status;
      this.response = answer.body;
      this.retryAfter = answer.retryAfter;
      queueMicrotask(() => this.onload?.());
    }
  };
}

const limited = (seconds: number): Answer => ({
  status: 429, retryAfter: seconds,
  body: { error: { code: "rate_limited", message: "Too many requests", retry_after: seconds, bucket: "uploads" } },
});
const stored: Answer = { status: 201, retryAfter: 0, body: { file: { id: "f1", filename: "a.txt" } } };

describe("uploadAttachment on 429", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.stubGlobal("fetch", vi.fn(async () => new Response(JSON.stringify({ limits: { max_upload_size: 1024 } }), {
      status: 200, headers: { "Content-Type": "application/json" },
    })));
    vi.stubGlobal("FormData", class { append() {} });
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it("waits out a short Retry-After and sends again", async () => {
    const sent = { count: 0 };
    vi.stubGlobal("XMLHttpRequest", fakeXhr([limited(2), stored], sent));
    const waits: number[] = [];
    const handle = uploadAttachment("c1", new File(["hi"], "a.txt"), () => undefined, (s) => waits.push(s));
    await vi.advanceTimersByTimeAsync(2000);
    await expect(handle.done).resolves.toMatchObject({ id: "f1" });
    expect(sent.count).toBe(2);
    expect(waits).toEqual([2]);
  });

  it("fails at once in words on a long Retry-After", async () => {
    const sent = { count: 0 };
    vi.stubGlobal("XMLHttpRequest", fakeXhr([limited(600), stored], sent));
    const handle = uploadAttachment("c1", new File(["hi"], "a.txt"), () => undefined);
    await expect(handle.done).rejects.toThrow(/a\.txt could not be uploaded: Too many requests.*10 minutes/);
    expect(sent.count).toBe(1);
  });

  it("stops waiting once the waits would add up to more than a few seconds", async () => {
    const sent = { count: 0 };
    vi.stubGlobal("XMLHttpRequest", fakeXhr([limited(3), limited(3), stored], sent));
    const handle = uploadAttachment("c1", new File(["hi"], "a.txt"), () => undefined);
    const outcome = expect(handle.done).rejects.toThrow(/Too many requests/);
    await vi.advanceTimersByTimeAsync(3000);
    await outcome;
    expect(sent.count).toBe(2);
  });
});
