// The one-time "Install Meadhall" hint on phones (components/InstallHint.svelte, docs/client.md "On
// phones"): which form it takes, decided from plain facts so that the unit tests cover it.

/** localStorage key: set once the hint was dismissed or the app installed; the hint never shows again. */
export const INSTALL_HINT_KEY = "meadhall.installHint";
/** The hint shows only below this width (phones). */
export const INSTALL_HINT_QUERY = "(max-width: 599px)";

export type InstallFacts = {
  userAgent: string;
  /** `navigator.maxTouchPoints` (iPadOS reports a Mac user agent with touch). */
  maxTouchPoints: number;
  /** Running as the installed app (`display-mode: standalone` or iOS's `navigator.standalone`). */
  standalone: boolean;
  /** A deferred `beforeinstallprompt` is held (Android, Chromium). */
  canPrompt: boolean;
  narrow: boolean;
  signedIn: boolean;
  /** The hint was dismissed or the app installed before. */
  done: boolean;
};

/** iOS or iPadOS Safari (other iOS browsers cannot add to the home screen the same way). */
export function isIosSafari(userAgent: string, maxTouchPoints: number): boolean {
  const ios = /iPad|iPhone|iPod/.test(userAgent) || (/Macintosh/.test(userAgent) && maxTouchPoints > 1);
  return ios && /Safari\//.test(userAgent) && !/CriOS|FxiOS|EdgiOS|OPiOS|GSA\//.test(userAgent);
}

/** "prompt": offer the browser's install dialog; "ios": tell Share → Add to Home Screen; null: nothing. */
export function installHintKind(f: InstallFacts): "prompt" | "ios" | null {
  if (f.standalone || f.done || !f.narrow || !f.signedIn) return null;
  if (f.canPrompt) return "prompt";
  if (isIosSafari(f.userAgent, f.maxTouchPoints)) return "ios";
  return null;
}
