import { describe, expect, it } from "vitest";
import { i18n, setLanguage } from "../src/i18n/index.svelte";
import { ApiError, configure } from "../src/lib/api";
import { finishStepUp, stepUp, StepUpCancelled, withStepUp } from "../src/lib/stepup.svelte";
import { clamp, drawRect, initialCrop, MAX_ZOOM, moveBy, outputSize, sourceRect, zoomTo } from "../src/settings/user/crop";
import {
  ago, codeBody, eventWords, fieldErrors, isWarning, languageChoices, LOCALE_PATTERN, methodWords, passwordRefusal,
  summariseAgent, timeIn,
} from "../src/settings/user/words";

function answer(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

describe("avatar crop", () => {
  it("starts centred with the shorter side filling the view", () => {
    const c = initialCrop(400, 200, 100);
    const r = drawRect(c);
    expect(r.h).toBe(100);
    expect(r.w).toBe(200);
    expect(r.x).toBe(-50);
    expect(sourceRect(c)).toEqual({ sx: 100, sy: 0, size: 200 });
  });

  it("never lets the picture leave a corner of the square empty", () => {
    const c = moveBy(initialCrop(400, 200, 100), 500, 500);
    // Only the wide side can move: 50 view pixels either way.
    expect(c.dx).toBe(50);
    expect(c.dy).toBe(0);
    const src = sourceRect(c);
    expect(src.sx).toBe(0);
    expect(moveBy(c, -1000, 0).dx).toBe(-50);
    expect(sourceRect(moveBy(c, -1000, 0)).sx + sourceRect(c).size).toBe(400);
  });

  it("zooms around the centre and keeps the zoom within bounds", () => {
    const c = initialCrop(300, 300, 150);
    const z = zoomTo(c, 2);
    expect(sourceRect(z)).toEqual({ sx: 75, sy: 75, size: 150 });
    expect(zoomTo(c, 10).zoom).toBe(MAX_ZOOM);
    expect(zoomTo(c, 0.2).zoom).toBe(1);
    // A moved picture zoomed out again is pulled back inside the square.
    const moved = moveBy(z, 60, 0);
    expect(moved.dx).toBe(60);
    expect(zoomTo(moved, 1).dx).toBe(0);
    expect(clamp({ ...moved, zoom: 1 }).dx).toBe(0);
  });

  it("exports at most 512 pixels and never upscales", () => {
    expect(outputSize(initialCrop(2000, 1500, 256))).toBe(512);
    expect(outputSize(initialCrop(120, 80, 256))).toBe(80);
    expect(outputSize(zoomTo(initialCrop(120, 80, 256), 4))).toBe(20);
  });
});

describe("words of the user settings", () => {
  it("names every security event type, with the failure reason", () => {
    const types = ["register", "login.success", "login.failure", "login.locked", "passkey.login", "passkey.register",
      "passkey.rename", "passkey.revoke", "2fa.enable", "2fa.disable", "2fa.backup_codes_regenerate",
      "2fa.backup_code_used", "2fa.reset", "password.change", "password.reset", "step_up.success", "step_up.failure",
      "session.revoke", "logout_all"];
    for (const t of types) expect(eventWords(t)).not.toContain("Security event");
    expect(eventWords("login.failure", { reason: "invalid_code" })).toBe("Failed sign-in attempt (wrong or reused code)");
    expect(eventWords("something.new")).toBe("Security event “something.new”");
    expect(isWarning("login.failure")).toBe(true);
    expect(isWarning("login.success")).toBe(false);
  });

  it("summarises user agents", () => {
    expect(summariseAgent("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/130.0.0.0 Safari/537.36"))
      .toBe("Chrome (headless) on Linux");
    expect(summariseAgent("Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0")).toBe("Firefox on Windows");
    expect(summariseAgent("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1"))
      .toBe("Safari on iOS");
    expect(summariseAgent("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36 Edg/131.0"))
      .toBe("Edge on Windows");
    expect(summariseAgent("python-httpx/0.28.1")).toBe("Program (python-httpx)");
    expect(summariseAgent(null)).toBe("Unknown device");
    expect(methodWords("cli")).toBe("Command line");
  });

  it("tells a TOTP code from a backup code", () => {
    expect(codeBody(" 123 456 ")).toEqual({ totp_code: "123456" });
    expect(codeBody("abcd-efgh-1234")).toEqual({ backup_code: "abcd-efgh-1234" });
    expect(codeBody("   ")).toBeNull();
  });

  it("offers the two languages the client speaks, each named in itself, and keeps another current locale", () => {
    expect(languageChoices("en")).toEqual([{ tag: "en", label: "English" }, { tag: "ru", label: "Русский" }]);
    expect(languageChoices("ru").map((c) => c.tag)).toEqual(["en", "ru"]);
    const kept = languageChoices("de");
    expect(kept.map((c) => c.tag)).toEqual(["en", "ru", "de"]);
    expect(kept[2].label).toBe("German — Deutsch");
    for (const c of kept) expect(c.tag).toMatch(LOCALE_PATTERN);
  });

  it("tells the time in a zone, and nothing for an unknown zone", () => {
    expect(timeIn("Europe/Berlin", new Date("2025-01-01T12:00:00Z"))).toMatch(/^(13|01).00/);
    expect(timeIn("Mars/Olympus_Mons")).toBeNull();
  });

  it("says how long ago", () => {
    const now = Date.parse("2025-01-01T12:00:00Z");
    expect(ago("2025-01-01T11:59:30Z", now)).toBe("just now");
    expect(ago("2025-01-01T11:55:00Z", now)).toBe("5 minutes ago");
    expect(ago("2024-12-31T11:00:00Z", now)).toBe("1 day ago");
  });

  it("speaks Russian, with its plural forms and its clock", async () => {
    await setLanguage("ru");
    try {
      const now = Date.parse("2025-01-01T12:00:00Z");
      expect(ago("2025-01-01T11:59:00Z", now)).toBe("1 минуту назад");
      expect(ago("2025-01-01T11:57:00Z", now)).toBe("3 минуты назад");
      expect(ago("2025-01-01T11:55:00Z", now)).toBe("5 минут назад");
      expect(ago("2025-01-01T11:39:00Z", now)).toBe("21 минуту назад");
      expect(ago("2024-12-30T12:00:00Z", now)).toBe("2 дня назад");
      expect(ago("2025-01-01T11:59:30Z", now)).toBe("только что");
      expect(eventWords("login.failure", { reason: "invalid_credentials" })).toBe("Неудачная попытка входа (неверный пароль)");
      expect(eventWords("something.new")).toBe("Событие безопасности «something.new»");
      expect(summariseAgent("Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0")).toBe("Firefox на Windows");
      expect(methodWords("password")).toBe("Пароль");
      const short = new ApiError(422, { code: "validation.failed", message: "Invalid", details: [{ field: "new_password", message: "too short" }] });
      expect(passwordRefusal(short)).toBe("Новый пароль слишком короткий: нужно не меньше 10 символов.");
      // The time in a zone is written as Russian writes it (24 hours, whatever the browser's own language).
      expect(timeIn("America/New_York", new Date("2025-01-01T17:05:00Z"))).toBe("12:05");
    } finally {
      await setLanguage("en");
    }
    expect(i18n.language).toBe("en");
    expect(ago("2025-01-01T11:57:00Z", Date.parse("2025-01-01T12:00:00Z"))).toBe("3 minutes ago");
    expect(timeIn("America/New_York", new Date("2025-01-01T17:05:00Z"))).toMatch(/^12:05\s?PM$/);
  });

  it("puts the refusals of a password and of a profile in words", () => {
    const short = new ApiError(422, { code: "validation.failed", message: "Invalid", details: [{ field: "new_password", message: "too short" }] });
    expect(passwordRefusal(short)).toContain("at least 10 characters");
    const common = new ApiError(422, { code: "validation.failed", message: "Invalid", details: [{ field: "new_password", message: "too common" }] });
    expect(passwordRefusal(common)).toContain("too common");
    const profile = new ApiError(422, { code: "validation.failed", message: "Invalid",
      details: [{ field: "body.timezone", message: "unknown time zone" }, { field: "display_name", message: "too long" }] });
    expect(fieldErrors(profile)).toEqual({ timezone: "unknown time zone", display_name: "too long" });
  });
});

describe("step-up", () => {
  it("asks once when the service wants it, then retries the call", async () => {
    const calls: string[] = [];
    let stepped = false;
    configure({ fetch: (async (url: string) => {
      calls.push(url);
      if (url.endsWith("/auth/password") && !stepped) {
        return answer(403, { error: { code: "auth.step_up_required", message: "Re-verify your identity to continue" } });
      }
      return new Response(null, { status: 204 });
    }) as typeof fetch });
    const { request } = await import("../src/lib/api");
    const done = withStepUp("Changing your password needs your current password.", () => request("/auth/password", { method: "POST", body: { new_password: "x" } }));
    await new Promise((r) => setTimeout(r, 0));
    expect(stepUp.open).toBe(true);
    expect(stepUp.reason).toContain("current password");
    stepped = true;
    finishStepUp(true);
    await done;
    expect(stepUp.open).toBe(false);
    expect(calls.filter((u) => u.endsWith("/auth/password"))).toHaveLength(2);
  });

  it("gives up when the person cancels, and does not ask for other refusals", async () => {
    let n = 0;
    configure({ fetch: (async () => {
      n++;
      return answer(403, { error: { code: "auth.step_up_required", message: "Re-verify" } });
    }) as typeof fetch });
    const { request } = await import("../src/lib/api");
    const done = withStepUp("why", () => request("/auth/2fa/backup-codes", { method: "POST" }));
    await new Promise((r) => setTimeout(r, 0));
    finishStepUp(false);
    await expect(done).rejects.toBeInstanceOf(StepUpCancelled);
    expect(n).toBe(1);

    configure({ fetch: (async () => answer(403, { error: { code: "perm.denied", message: "Missing permission" } })) as typeof fetch });
    await expect(withStepUp("why", () => request("/x", { method: "POST" }))).rejects.toMatchObject({ code: "perm.denied" });
    expect(stepUp.open).toBe(false);
  });
});
