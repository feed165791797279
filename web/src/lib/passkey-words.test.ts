// A refused passkey in words (src/lib/webauthn.ts, passkeyWords): an administrator's key used without its PIN
// or biometric (401 auth.passkey_uv_required, docs/passkeys.md) says what to do, not only the code.
import { describe, expect, it } from "vitest";
import { ApiError } from "./api";
import { passkeyWords } from "./webauthn";
import { eventWords } from "../settings/user/words";

describe("passkeyWords", () => {
  it("asks an administrator to verify with a PIN or biometric", () => {
    const err = new ApiError(401, { code: "auth.passkey_uv_required", message: "x" });
    expect(passkeyWords(err)).toMatch(/^Administrators must verify with a PIN or biometric on their passkey\./);
  });

  it("names the reason of such a refused sign-in in the security events", () => {
    expect(eventWords("login.failure", { reason: "passkey_uv_required" }))
      .toMatch(/\(passkey used without its PIN or biometric\)$/);
  });
});
