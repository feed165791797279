// Step-up (re-verification) for the operations the service guards with it: the call is made once; when
// the service answers `auth.step_up_required`, the step-up dialog (StepUpDialog.svelte, mounted by the
// settings screens) asks for the password (and a code when 2FA is on), and the call is made again.

import { ApiError } from "./api";
import { t } from "../i18n/index.svelte";

interface Pending {
  resolve: (done: boolean) => void;
}

/** What the dialog shows: open while a guarded call waits for the person to re-verify. */
export const stepUp = $state({ open: false, reason: "" });
let pending: Pending | null = null;

/** Asks for re-verification; resolves true once `POST /auth/step-up` succeeded, false when cancelled. */
export function askStepUp(reason: string): Promise<boolean> {
  pending?.resolve(false);
  stepUp.reason = reason;
  stepUp.open = true;
  return new Promise((resolve) => (pending = { resolve }));
}

/** Called by the dialog: the step-up succeeded (true) or the person cancelled (false). */
export function finishStepUp(done: boolean): void {
  stepUp.open = false;
  const p = pending;
  pending = null;
  p?.resolve(done);
}

export class StepUpCancelled extends Error {
  constructor() {
    super(t("shell.stepUp.cancelled"));
  }
}

/** Runs `call`; if the service wants a recent re-verification, asks for it and runs `call` once more. */
export async function withStepUp<T>(reason: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== "auth.step_up_required") throw err;
    if (!(await askStepUp(reason))) throw new StepUpCancelled();
    return await call();
  }
}
