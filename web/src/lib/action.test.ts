import { describe, expect, it } from "vitest";
import { Action } from "./action.svelte";
import { ApiError, errorText } from "./api";

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("errorText", () => {
  it("says an ApiError's envelope, an Error's message, else the value", () => {
    expect(errorText(new ApiError(403, { code: "perm.denied", message: "You may not." }))).toBe("You may not.");
    expect(errorText(new Error("boom"))).toBe("boom");
    expect(errorText("plain")).toBe("plain");
    expect(errorText(42)).toBe("42");
  });
});

describe("Action", () => {
  it("is busy while the call runs and returns its result", async () => {
    const action = new Action();
    const d = deferred<number>();
    const run = action.run(() => d.promise);
    expect(action.busy).toBe(true);
    d.resolve(7);
    expect(await run).toBe(7);
    expect(action.busy).toBe(false);
    expect(action.error).toBe("");
  });

  it("keeps the failure in words, returns undefined and never throws", async () => {
    const action = new Action();
    const seen: unknown[] = [];
    const settled: string[] = [];
    const result = await action.run(
      async () => {
        throw new ApiError(429, { code: "rate_limited", message: "Too many requests" }, 900);
      },
      { onError: (err) => seen.push(err), onSettled: () => settled.push("done") },
    );
    expect(result).toBeUndefined();
    expect(action.error).toBe("Too many requests: this was not done. Try again in 15 minutes.");
    expect(action.busy).toBe(false);
    expect(seen).toHaveLength(1);
    expect(settled).toEqual(["done"]);
  });

  it("clears the last words when a call starts, unless told to keep them", async () => {
    const action = new Action();
    action.error = "old";
    const d = deferred<void>();
    const run = action.run(() => d.promise, { clear: false });
    expect(action.error).toBe("old");
    d.resolve();
    await run;
    expect(action.error).toBe("old");
    const again = action.run(async () => undefined);
    expect(action.error).toBe("");
    await again;
  });

  it("leaves a quiet failure unsaid", async () => {
    const action = new Action();
    const abort = Object.assign(new Error("aborted"), { name: "AbortError" });
    let told = false;
    await action.run(
      async () => {
        throw abort;
      },
      { quiet: (err) => (err as Error).name === "AbortError", onError: () => (told = true) },
    );
    expect(action.error).toBe("");
    expect(told).toBe(false);
  });

  it("with `latest`, lets only the newest call land", async () => {
    const action = new Action();
    const older = deferred<string>();
    const newer = deferred<string>();
    const settled: string[] = [];
    const first = action.run(() => older.promise, { latest: true, onSettled: () => settled.push("first") });
    const second = action.run((current) => newer.promise.then((v) => (current() ? v : "stale")), {
      latest: true,
      onSettled: () => settled.push("second"),
    });
    older.reject(new Error("late failure"));
    expect(await first).toBeUndefined();
    expect(action.error).toBe("");
    expect(action.busy).toBe(true);
    newer.resolve("fresh");
    expect(await second).toBe("fresh");
    expect(action.busy).toBe(false);
    expect(settled).toEqual(["second"]);
  });

  it("without `latest`, every call's outcome lands", async () => {
    const action = new Action();
    const a = deferred<void>();
    const b = deferred<void>();
    const first = action.run(() => a.promise);
    const second = action.run(() => b.promise);
    b.resolve();
    await second;
    expect(action.busy).toBe(false);
    a.reject(new Error("first failed"));
    await first;
    expect(action.error).toBe("first failed");
  });
});

describe("Action beside a newest-wins load", () => {
  it("a one-off call does not supersede the load in flight", async () => {
    const action = new Action();
    const load = deferred<string>();
    const loading = action.run(() => load.promise, { latest: true });
    await action.run(async () => "one-off");
    load.resolve("page");
    expect(await loading).toBe("page");
  });
});

describe("Action with hold: false", () => {
  it("runs beside the action's own call without touching busy", async () => {
    const action = new Action();
    const own = deferred<void>();
    const running = action.run(() => own.promise);
    await action.run(async () => {
      throw new Error("reload failed");
    }, { hold: false });
    expect(action.busy).toBe(true);
    expect(action.error).toBe("reload failed");
    own.resolve();
    await running;
    expect(action.busy).toBe(false);
  });
});
