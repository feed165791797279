// One way for a screen to run a call: `busy` while it runs, the failure kept in words (`errorText`) for
// the screen to show, and, for loads that a newer one supersedes (a search typed on, another user
// opened), only the newest call's outcome lands. The call never throws to the screen: a failure is
// `error`, and the result is undefined.

import { errorText } from "./api";

export interface RunOptions {
  /** Clear `error` when the call starts (default). False leaves the last words up until the work
   * itself clears them (a reload behind a shown list). */
  clear?: boolean;
  /** Whether the call makes the action `busy` (default). False for a call beside the action's own, such
   * as a reload of the list under a form, that must not disable the form. */
  hold?: boolean;
  /** Only the newest call of this action counts: an older one that settles later leaves `busy`,
   * `error` and its hooks alone, and returns undefined. */
  latest?: boolean;
  /** The failure in words, when a screen says some refusals its own way (default `errorText`). */
  words?: (err: unknown) => string;
  /** A failure that is none (an abort the screen made itself): left unsaid, `onError` not told. */
  quiet?: (err: unknown) => boolean;
  /** Told of the failure after `error` holds its words (focus a field, drop a stale list). */
  onError?: (err: unknown) => void;
  /** Runs once the call settled either way (the `finally` of the call). */
  onSettled?: () => void;
}

export class Action {
  busy = $state(false);
  error = $state("");
  #seq = 0;

  /** `busy` true from the start: a screen that loads at once shows its loading state from the first frame. */
  constructor(options: { busy?: boolean } = {}) {
    this.busy = options.busy ?? false;
  }

  /** Runs `work` (given `current()`: whether it is still the newest call) and returns its result, or
   * undefined when it failed or, with `latest`, was superseded. */
  async run<T>(work: (current: () => boolean) => Promise<T>, options: RunOptions = {}): Promise<T | undefined> {
    const { clear = true, hold = true, latest = false, words = errorText, quiet, onError, onSettled } = options;
    // Only calls that ask for it take part in the race: a one-off call beside a load never supersedes it.
    const mine = latest ? ++this.#seq : this.#seq;
    const current = () => !latest || mine === this.#seq;
    if (clear) this.error = "";
    if (hold) this.busy = true;
    try {
      const value = await work(current);
      return current() ? value : undefined;
    } catch (err) {
      if (current() && !quiet?.(err)) {
        this.error = words(err);
        onError?.(err);
      }
      return undefined;
    } finally {
      if (current()) {
        if (hold) this.busy = false;
        onSettled?.();
      }
    }
  }
}
