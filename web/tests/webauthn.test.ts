import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../src/lib/api";
import {
  authenticationToJSON,
  base64urlToBuffer,
  bufferToBase64url,
  createPasskey,
  creationOptionsFromJSON,
  getPasskey,
  PasskeyCancelled,
  passkeyWords,
  registrationToJSON,
  requestOptionsFromJSON,
} from "../src/lib/webauthn";

const bytes = (...values: number[]) => new Uint8Array(values).buffer;
const list = (buffer: ArrayBuffer | BufferSource | undefined) => Array.from(new Uint8Array(buffer as ArrayBuffer));

describe("base64url", () => {
  it("encodes without padding and with the URL alphabet", () => {
    expect(bufferToBase64url(bytes())).toBe("");
    expect(bufferToBase64url(bytes(0xfb, 0xff))).toBe("-_8");
    expect(bufferToBase64url(bytes(1, 2, 3))).toBe("AQID");
    expect(bufferToBase64url(bytes(0x66, 0x6f))).toBe("Zm8");
    expect(bufferToBase64url(new Uint8Array([9, 1, 2, 3, 9]).subarray(1, 4))).toBe("AQID");
  });

  it("decodes padded and unpadded text, and refuses what is not base64url", () => {
    expect(list(base64urlToBuffer("-_8"))).toEqual([0xfb, 0xff]);
    expect(list(base64urlToBuffer("Zm8="))).toEqual([0x66, 0x6f]);
    expect(list(base64urlToBuffer(""))).toEqual([]);
    expect(() => base64urlToBuffer("a b")).toThrow(TypeError);
    expect(() => base64urlToBuffer("abcde")).toThrow(TypeError);
  });

  it("round-trips every byte value", () => {
    const all = new Uint8Array(256).map((_, i) => i);
    for (let n = 0; n < 5; n++) {
      const part = all.slice(n);
      expect(list(base64urlToBuffer(bufferToBase64url(part)))).toEqual(Array.from(part));
    }
  });
});

describe("options from the service's JSON", () => {
  const creation = {
    rp: { id: "localhost", name: "Meadhall" },
    user: { id: "AQID", name: "alice", displayName: "Alice" },
    challenge: "-_8",
    pubKeyCredParams: [{ type: "public-key", alg: -7 }, { type: "public-key", alg: -257 }],
    timeout: 300000,
    excludeCredentials: [{ id: "BAU", type: "public-key", transports: ["internal"] }],
    authenticatorSelection: { residentKey: "preferred", userVerification: "preferred" },
    attestation: "none",
  };

  it("turns the creation options' binary fields into buffers and keeps the rest", () => {
    const o = creationOptionsFromJSON(creation);
    expect(list(o.challenge)).toEqual([0xfb, 0xff]);
    expect(list(o.user.id)).toEqual([1, 2, 3]);
    expect(o.user.name).toBe("alice");
    expect(o.rp).toEqual({ id: "localhost", name: "Meadhall" });
    expect(o.excludeCredentials?.map((d) => [list(d.id), d.type, d.transports])).toEqual([[[4, 5], "public-key", ["internal"]]]);
    expect(o.authenticatorSelection?.residentKey).toBe("preferred");
    expect(o.attestation).toBe("none");
    expect(o.timeout).toBe(300000);
  });

  it("leaves out an absent credential list instead of passing undefined through", () => {
    const { excludeCredentials: _, ...rest } = creation;
    expect("excludeCredentials" in creationOptionsFromJSON(rest)).toBe(false);
    const r = requestOptionsFromJSON({ challenge: "AQID", rpId: "localhost", userVerification: "preferred" });
    expect("allowCredentials" in r).toBe(false);
    expect(r.rpId).toBe("localhost");
  });

  it("turns the request options' challenge and allowed keys into buffers", () => {
    const o = requestOptionsFromJSON({ challenge: "AQID", allowCredentials: [{ id: "-_8", type: "public-key" }], timeout: 300000 });
    expect(list(o.challenge)).toEqual([1, 2, 3]);
    expect(o.allowCredentials?.map((d) => list(d.id))).toEqual([[0xfb, 0xff]]);
    expect(o.allowCredentials?.[0].transports).toBeUndefined();
  });
});

function registration(extra: Record<string, unknown> = {}) {
  return {
    id: "-_8",
    rawId: bytes(0xfb, 0xff),
    type: "public-key",
    authenticatorAttachment: "platform",
    getClientExtensionResults: () => ({ credProps: { rk: true } }),
    response: { clientDataJSON: bytes(1), attestationObject: bytes(2, 3), getTransports: () => ["internal"], ...extra },
  };
}

function assertion(userHandle: ArrayBuffer | null) {
  return {
    id: "AQID",
    rawId: bytes(1, 2, 3),
    type: "public-key",
    authenticatorAttachment: null,
    response: { clientDataJSON: bytes(1), authenticatorData: bytes(5), signature: bytes(6, 7), userHandle },
  };
}

describe("credentials to the service's JSON", () => {
  it("writes a registration as RegistrationResponseJSON", () => {
    expect(registrationToJSON(registration())).toEqual({
      id: "-_8",
      rawId: "-_8",
      type: "public-key",
      authenticatorAttachment: "platform",
      clientExtensionResults: { credProps: { rk: true } },
      response: { clientDataJSON: "AQ", attestationObject: "AgM", transports: ["internal"] },
    });
  });

  it("leaves out transports the browser cannot tell, and refuses an assertion as a registration", () => {
    const json = registrationToJSON(registration({ getTransports: () => { throw new Error("no"); } }));
    expect(json.response).toEqual({ clientDataJSON: "AQ", attestationObject: "AgM" });
    expect(() => registrationToJSON(assertion(null))).toThrow(TypeError);
  });

  it("writes an assertion as AuthenticationResponseJSON, with the user handle when there is one", () => {
    expect(authenticationToJSON(assertion(bytes(9, 9)))).toEqual({
      id: "AQID",
      rawId: "AQID",
      type: "public-key",
      clientExtensionResults: {},
      response: { clientDataJSON: "AQ", authenticatorData: "BQ", signature: "Bgc", userHandle: "CQk" },
    });
    expect(authenticationToJSON(assertion(null)).response).not.toHaveProperty("userHandle");
    expect(() => authenticationToJSON(registration())).toThrow(TypeError);
  });
});

describe("the ceremonies in the browser", () => {
  afterEach(() => vi.unstubAllGlobals());

  function browser(credentials: { create?: unknown; get?: unknown }) {
    vi.stubGlobal("window", { isSecureContext: true, PublicKeyCredential: function PublicKeyCredential() {} });
    vi.stubGlobal("navigator", { credentials: { create: async () => null, get: async () => null, ...credentials } });
  }

  it("refuses without a secure context", async () => {
    vi.stubGlobal("window", { isSecureContext: false, PublicKeyCredential: function PublicKeyCredential() {} });
    vi.stubGlobal("navigator", { credentials: { get: async () => null } });
    await expect(getPasskey({ challenge: "AQID" })).rejects.toThrow("This browser cannot use passkeys.");
  });

  it("asks the browser with buffers and answers JSON; the autofill asks with conditional mediation", async () => {
    const asked: CredentialRequestOptions[] = [];
    browser({ get: async (o: CredentialRequestOptions) => { asked.push(o); return assertion(null); } });
    const signal = new AbortController().signal;
    const json = await getPasskey({ challenge: "AQID" }, { conditional: true, signal });
    expect(json.rawId).toBe("AQID");
    expect(list(asked[0].publicKey?.challenge)).toEqual([1, 2, 3]);
    expect((asked[0] as { mediation?: string }).mediation).toBe("conditional");
    expect(asked[0].signal).toBe(signal);
    await getPasskey({ challenge: "AQID" });
    expect((asked[1] as { mediation?: string }).mediation).toBeUndefined();
  });

  it("creates a passkey from the creation options", async () => {
    let seen: CredentialCreationOptions | null = null;
    browser({ create: async (o: CredentialCreationOptions) => { seen = o; return registration(); } });
    const json = await createPasskey({ rp: { id: "localhost", name: "M" }, user: { id: "AQ", name: "a", displayName: "A" },
      challenge: "Ag", pubKeyCredParams: [{ type: "public-key", alg: -7 }] });
    expect(json.id).toBe("-_8");
    expect(list(seen!.publicKey?.user.id)).toEqual([1]);
  });

  it("says a cancelled or refused prompt in words", async () => {
    browser({ get: async () => { throw new DOMException("denied", "NotAllowedError"); } });
    const cancelled = await getPasskey({ challenge: "AQID" }).catch((e) => e);
    expect(cancelled).toBeInstanceOf(PasskeyCancelled);
    expect(cancelled.message).toMatch(/cancelled or timed out/);

    browser({ create: async () => { throw new DOMException("exists", "InvalidStateError"); } });
    const again = await createPasskey({ rp: {}, user: { id: "AQ", name: "a", displayName: "A" }, challenge: "Ag" }).catch((e) => e);
    expect(again.message).toMatch(/already holds a passkey/);

    browser({ get: async () => null });
    await expect(getPasskey({ challenge: "AQID" })).rejects.toBeInstanceOf(PasskeyCancelled);
  });
});

describe("passkeyWords", () => {
  const refusal = (status: number, code: string, message: string) => new ApiError(status, { code, message });

  it("gives the service's passkey refusals sentences of their own", () => {
    expect(passkeyWords(refusal(401, "auth.passkey_failed", "x"))).toMatch(/not recognised/);
    expect(passkeyWords(refusal(401, "auth.ceremony_invalid", "x"))).toMatch(/expired or was already used/);
    expect(passkeyWords(refusal(403, "auth.passkey_unsupported", "x"))).toMatch(/IP address/);
    expect(passkeyWords(refusal(403, "user.banned", "x"))).toBe("This account is banned from this instance.");
  });

  it("tells an administrator without two-factor authentication how the operator enrols them", () => {
    const words = passkeyWords(refusal(403, "auth.2fa_enrollment_required", "Instance administrators must enable two-factor authentication"));
    expect(words).toBe("Instance administrators must enable two-factor authentication. The operator sets it up on the server with: meadhall totp-setup --email <your email>");
    // With the service's hint, the command it names (the account's own email) is shown instead.
    const hinted = new ApiError(403, { code: "auth.2fa_enrollment_required", message: "Instance administrators must enable two-factor authentication.",
      hint: "meadhall totp-setup --email astrid@example.org" });
    expect(hinted.hint).toBe("meadhall totp-setup --email astrid@example.org");
    expect(passkeyWords(hinted)).toBe("Instance administrators must enable two-factor authentication. The operator sets it up on the server with: meadhall totp-setup --email astrid@example.org");
  });

  it("keeps other messages and plain errors as they are", () => {
    expect(passkeyWords(refusal(429, "rate_limited", "Too many requests."))).toBe("Too many requests.");
    expect(passkeyWords(new PasskeyCancelled())).toMatch(/cancelled/);
  });
});
