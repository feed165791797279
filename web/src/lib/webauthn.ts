// Passkeys (WebAuthn) in the browser (docs/client.md): the service speaks the JSON forms of the
// ceremony (PublicKeyCredentialCreationOptionsJSON / RequestOptionsJSON in, RegistrationResponseJSON /
// AuthenticationResponseJSON out, binary fields as base64url), while navigator.credentials wants and
// gives ArrayBuffers. The conversion is done here by hand rather than with the browser's own
// parse...FromJSON / toJSON, which not every browser has and which would make two code paths to test.

import { ApiError, call, errorText } from "./api";
import { t } from "../i18n/index.svelte";

type Json = Record<string, unknown>;

// ---- base64url -------------------------------------------------------------------------------------

/** Bytes as base64url without padding (the encoding of every binary field of the JSON forms). */
export function bufferToBase64url(data: ArrayBuffer | ArrayBufferView): string {
  const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  let binary = "";
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** base64url (padded or not; plain base64 is accepted too) as bytes; throws on anything else. */
export function base64urlToBuffer(text: string): ArrayBuffer {
  const clean = text.replace(/=+$/, "").replace(/-/g, "+").replace(/_/g, "/");
  if (!/^[A-Za-z0-9+/]*$/.test(clean) || clean.length % 4 === 1) throw new TypeError("Not base64url");
  const binary = atob(clean + "=".repeat((4 - (clean.length % 4)) % 4));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes.buffer;
}

// ---- options: JSON -> what navigator.credentials wants ---------------------------------------------

interface DescriptorJSON {
  id: string;
  type: string;
  transports?: string[];
}

function descriptors(list: unknown): PublicKeyCredentialDescriptor[] | undefined {
  if (!Array.isArray(list)) return undefined;
  return (list as DescriptorJSON[]).map((d) => ({
    id: base64urlToBuffer(d.id),
    type: d.type as PublicKeyCredentialType,
    ...(d.transports ? { transports: d.transports as AuthenticatorTransport[] } : {}),
  }));
}

/** `PublicKeyCredentialCreationOptionsJSON` (passkeyRegisterOptions) as creation options. */
export function creationOptionsFromJSON(json: Json): PublicKeyCredentialCreationOptions {
  const user = json.user as { id: string; name: string; displayName: string };
  const options: PublicKeyCredentialCreationOptions = {
    ...(json as object),
    rp: json.rp as PublicKeyCredentialRpEntity,
    challenge: base64urlToBuffer(json.challenge as string),
    user: { id: base64urlToBuffer(user.id), name: user.name, displayName: user.displayName },
    pubKeyCredParams: json.pubKeyCredParams as PublicKeyCredentialParameters[],
  };
  const exclude = descriptors(json.excludeCredentials);
  if (exclude) options.excludeCredentials = exclude;
  else delete options.excludeCredentials;
  return options;
}

/** `PublicKeyCredentialRequestOptionsJSON` (passkeyLoginOptions) as request options. */
export function requestOptionsFromJSON(json: Json): PublicKeyCredentialRequestOptions {
  const options: PublicKeyCredentialRequestOptions = {
    ...(json as object),
    challenge: base64urlToBuffer(json.challenge as string),
  };
  const allow = descriptors(json.allowCredentials);
  if (allow) options.allowCredentials = allow;
  else delete options.allowCredentials;
  return options;
}

// ---- credentials -> JSON ---------------------------------------------------------------------------

/** The parts of a PublicKeyCredential read here (so the tests can hand in plain objects). */
export interface CredentialLike {
  id: string;
  rawId: ArrayBuffer;
  type: string;
  authenticatorAttachment?: string | null;
  response: AuthenticatorResponse & {
    attestationObject?: ArrayBuffer;
    getTransports?: () => string[];
    authenticatorData?: ArrayBuffer;
    signature?: ArrayBuffer;
    userHandle?: ArrayBuffer | null;
  };
  getClientExtensionResults?: () => unknown;
}

function common(cred: CredentialLike): Json {
  return {
    id: cred.id,
    rawId: bufferToBase64url(cred.rawId),
    type: cred.type,
    clientExtensionResults: cred.getClientExtensionResults?.() ?? {},
    ...(cred.authenticatorAttachment ? { authenticatorAttachment: cred.authenticatorAttachment } : {}),
  };
}

/** A new credential as `RegistrationResponseJSON` (passkeyRegisterVerify). */
export function registrationToJSON(cred: CredentialLike): Json {
  const r = cred.response;
  if (!r.attestationObject) throw new TypeError("Not a registration");
  let transports: string[] = [];
  try {
    transports = r.getTransports?.() ?? [];
  } catch {
    // Some browsers have the method but refuse to call it on this response: the transports are optional.
  }
  return {
    ...common(cred),
    response: {
      clientDataJSON: bufferToBase64url(r.clientDataJSON),
      attestationObject: bufferToBase64url(r.attestationObject),
      ...(transports.length ? { transports } : {}),
    },
  };
}

/** An assertion as `AuthenticationResponseJSON` (passkeyLoginVerify, stepUp). */
export function authenticationToJSON(cred: CredentialLike): Json {
  const r = cred.response;
  if (!r.authenticatorData || !r.signature) throw new TypeError("Not an assertion");
  return {
    ...common(cred),
    response: {
      clientDataJSON: bufferToBase64url(r.clientDataJSON),
      authenticatorData: bufferToBase64url(r.authenticatorData),
      signature: bufferToBase64url(r.signature),
      ...(r.userHandle && r.userHandle.byteLength ? { userHandle: bufferToBase64url(r.userHandle) } : {}),
    },
  };
}

// ---- the ceremonies --------------------------------------------------------------------------------

let enabledOnce: Promise<boolean> | null = null;

/** Whether the instance offers passkeys (getMeta `features.passkeys_enabled`; false when the server's
 * domain is an IP address), asked once per page. A failed question is asked again next time. */
export function passkeysEnabled(): Promise<boolean> {
  enabledOnce ??= call("getMeta")
    .then((meta) => meta.features?.passkeys_enabled === true)
    .catch(() => {
      enabledOnce = null;
      return false;
    });
  return enabledOnce;
}

/** Whether this browser can use passkeys at all (WebAuthn needs a secure context: https or localhost). */
export function passkeysSupported(): boolean {
  return typeof window !== "undefined" && window.isSecureContext === true && typeof window.PublicKeyCredential === "function"
    && typeof navigator.credentials?.get === "function";
}

/** Whether the browser offers passkeys in the autofill of a username field (conditional mediation). */
export async function autofillSupported(): Promise<boolean> {
  if (!passkeysSupported()) return false;
  const check = (window.PublicKeyCredential as unknown as { isConditionalMediationAvailable?: () => Promise<boolean> })
    .isConditionalMediationAvailable;
  if (typeof check !== "function") return false;
  try {
    return await check.call(window.PublicKeyCredential);
  } catch {
    return false;
  }
}

/** Raised when the person did not finish the browser's passkey prompt (cancelled, timed out, aborted). */
export class PasskeyCancelled extends Error {
  constructor(message = t("shell.passkey.cancelled")) {
    super(message);
  }
}

/** A browser failure (DOMException) in words; the service's own refusals are handled by `passkeyWords`. */
function browserFailure(err: unknown, registering: boolean): Error {
  const name = err instanceof Error || err instanceof DOMException ? err.name : "";
  if (name === "AbortError") return new PasskeyCancelled(t("shell.passkey.stopped"));
  if (name === "NotAllowedError") return new PasskeyCancelled();
  if (name === "InvalidStateError" && registering) {
    return new Error(t("shell.passkey.alreadyOnDevice"));
  }
  if (name === "SecurityError") return new Error(t("shell.passkey.securityError"));
  if (name === "NotSupportedError") return new Error(t("shell.passkey.notSupported"));
  return err instanceof Error ? err : new Error(String(err));
}

/** Creates a passkey from the service's creation options and answers `RegistrationResponseJSON`. */
export async function createPasskey(options: Json): Promise<Json> {
  if (!passkeysSupported()) throw new Error(t("shell.passkey.unavailable"));
  let cred: Credential | null;
  try {
    cred = await navigator.credentials.create({ publicKey: creationOptionsFromJSON(options) });
  } catch (err) {
    throw browserFailure(err, true);
  }
  if (!cred) throw new PasskeyCancelled();
  return registrationToJSON(cred as unknown as CredentialLike);
}

/** Asks the browser for a passkey (a prompt, or the autofill with `conditional`) and answers
 * `AuthenticationResponseJSON`. */
export async function getPasskey(options: Json, how: { conditional?: boolean; signal?: AbortSignal } = {}): Promise<Json> {
  if (!passkeysSupported()) throw new Error(t("shell.passkey.unavailable"));
  let cred: Credential | null;
  try {
    const request: CredentialRequestOptions = { publicKey: requestOptionsFromJSON(options), signal: how.signal };
    if (how.conditional) (request as { mediation?: string }).mediation = "conditional";
    cred = await navigator.credentials.get(request);
  } catch (err) {
    throw browserFailure(err, false);
  }
  if (!cred) throw new PasskeyCancelled();
  return authenticationToJSON(cred as unknown as CredentialLike);
}

/** Any failure of a passkey sign-in or step-up in words (the service's codes get sentences of their own). */
export function passkeyWords(err: unknown): string {
  if (err instanceof ApiError) {
    switch (err.code) {
      case "auth.passkey_failed":
        return t("shell.passkey.failed");
      case "auth.passkey_uv_required":
        return t("shell.passkey.uvRequired");
      case "auth.ceremony_invalid":
        return t("shell.passkey.ceremonyInvalid");
      case "auth.passkey_unsupported":
        return t("shell.passkey.unsupported");
      case "user.banned":
        return t("auth.banned");
      case "auth.2fa_enrollment_required":
        // The message already names the service's command when it sent one (ApiError's `hint`).
        return err.hint ? errorText(err)
          : t("errors.enrollmentHint", { message: errorText(err).replace(/\.$/, ""), hint: t("shell.passkey.enrollCommand") });
      default:
        return errorText(err);
    }
  }
  return errorText(err);
}
