// Touch gestures on phones (docs/client.md, "On phones"): small Svelte actions over pure decisions that
// the unit tests cover (tests/gestures.test.ts). Only touch acts: a mouse sees no change, because the
// actions listen to touch events or check `pointerType === "touch"`.

/** Narrow screens, where the navigation is a drawer (Shell.svelte's breakpoint). */
export const DRAWER_QUERY = "(max-width: 900px)";
/** How far from the left edge a swipe that opens the drawer starts, in CSS pixels. */
export const EDGE = 24;
/** How far a finger travels sideways before a swipe counts. */
export const SWIPE_MIN = 50;
/** How long a finger rests on a message before its menu opens. */
export const LONG_PRESS_MS = 500;
/** How far a resting finger may drift before the long press is abandoned. */
export const LONG_PRESS_SLOP = 10;
/** How far the list is pulled down before letting go refreshes it. */
export const PULL_THRESHOLD = 64;

export type Point = { x: number; y: number };

/**
 * What a finished horizontal swipe does to the drawer: from the left edge to the right opens it, to the
 * left (anywhere) closes it when open. Mostly vertical moves (scrolling) do nothing.
 */
export function swipeAction(start: Point, end: Point, drawerOpen: boolean): "open" | "close" | null {
  const dx = end.x - start.x;
  const dy = end.y - start.y;
  if (Math.abs(dx) < SWIPE_MIN || Math.abs(dx) < Math.abs(dy) * 1.5) return null;
  if (dx > 0 && !drawerOpen && start.x <= EDGE) return "open";
  if (dx < 0 && drawerOpen) return "close";
  return null;
}

/** Whether a finger that started at `start` and is now at `now` moved too far for a long press. */
export function movedTooFar(start: Point, now: Point, slop = LONG_PRESS_SLOP): boolean {
  return Math.hypot(now.x - start.x, now.y - start.y) > slop;
}

export type PullPhase = "idle" | "pull" | "release" | "refreshing";

/** The phase of a pull by `distance` pixels (finger travel) down at the top of the list. */
export function pullPhase(distance: number, threshold = PULL_THRESHOLD): PullPhase {
  if (distance <= 0) return "idle";
  return distance >= threshold ? "release" : "pull";
}

/** How far the indicator follows the finger: half the travel, at most `max` pixels (a rubber band). */
export function pullOffset(distance: number, max = 80): number {
  return Math.max(0, Math.min(max, distance / 2));
}

function touchPoint(e: TouchEvent): Point | null {
  const t = e.touches[0] ?? e.changedTouches[0];
  return t ? { x: t.clientX, y: t.clientY } : null;
}

// ---- the drawer's edge swipe ---------------------------------------------------------------------------

export type EdgeSwipeOptions = { isOpen: () => boolean; open: () => void; close: () => void };


const PASSIVE: AddEventListenerOptions = { passive: true };

/** Adds each listener to `node`; the answer removes them all (an action's `destroy`). */
function listen<E extends Event>(node: HTMLElement, listeners: [string, (e: E) => void, AddEventListenerOptions?][]): () => void {
  for (const [type, handler, options] of listeners) node.addEventListener(type, handler as EventListener, options);
  return () => {
    for (const [type, handler, options] of listeners) node.removeEventListener(type, handler as EventListener, options);
  };
}

/** `use:edgeSwipe={{ isOpen, open, close }}`: a swipe right from the left edge opens, left closes. */
export function edgeSwipe(node: HTMLElement, options: EdgeSwipeOptions) {
  let opts = options;
  let start: Point | null = null;
  const begin = (e: TouchEvent) => {
    start = e.touches.length === 1 && matchMedia(DRAWER_QUERY).matches ? touchPoint(e) : null;
  };
  const end = (e: TouchEvent) => {
    const from = start;
    start = null;
    const to = touchPoint(e);
    if (!from || !to) return;
    const action = swipeAction(from, to, opts.isOpen());
    if (action === "open") opts.open();
    else if (action === "close") opts.close();
  };
  const cancel = () => (start = null);
  const stop = listen(node, [["touchstart", begin, PASSIVE], ["touchend", end, PASSIVE], ["touchcancel", cancel, PASSIVE]]);
  return {
    update(next: EdgeSwipeOptions) {
      opts = next;
    },
    destroy: stop,
  };
}

// ---- long press ----------------------------------------------------------------------------------------

export type LongPressOptions = { onpress: (e: PointerEvent) => void; delay?: number };

/**
 * `use:longPress={{ onpress }}`: a finger resting ~500 ms on the element calls `onpress` with the
 * pointerdown event (its coordinates place a menu). Moving more than 10 px, scrolling or lifting the
 * finger earlier cancels it. While pressing, the element shows no text-selection callout.
 */
export function longPress(node: HTMLElement, options: LongPressOptions) {
  let opts = options;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let start: Point | null = null;
  let fired = false;

  const reset = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    start = null;
    node.style.removeProperty("-webkit-touch-callout");
    node.style.removeProperty("-webkit-user-select");
    node.style.removeProperty("user-select");
    window.removeEventListener("scroll", reset, true);
  };
  const down = (e: PointerEvent) => {
    if (e.pointerType !== "touch" || !e.isPrimary) return;
    reset();
    fired = false;
    start = { x: e.clientX, y: e.clientY };
    node.style.setProperty("-webkit-touch-callout", "none");
    node.style.setProperty("-webkit-user-select", "none");
    node.style.setProperty("user-select", "none");
    window.addEventListener("scroll", reset, { capture: true, passive: true });
    timer = setTimeout(() => {
      timer = null;
      fired = true;
      opts.onpress(e);
      reset();
    }, opts.delay ?? LONG_PRESS_MS);
  };
  const move = (e: PointerEvent) => {
    if (start && e.pointerType === "touch" && movedTooFar(start, { x: e.clientX, y: e.clientY })) reset();
  };
  // The browser's own long-press menu (a contextmenu after a touch) would open the menu a second time.
  const context = (e: MouseEvent) => {
    if (fired) {
      e.preventDefault();
      e.stopImmediatePropagation();
    }
  };
  const up = () => {
    reset();
    setTimeout(() => (fired = false), 400);
  };
  const stop = listen(node, [["pointerdown", down], ["pointermove", move], ["pointerup", up], ["pointercancel", reset],
    ["contextmenu", context, { capture: true }]]);
  return {
    update(next: LongPressOptions) {
      opts = next;
    },
    destroy() {
      reset();
      stop();
    },
  };
}

// ---- pull to refresh -----------------------------------------------------------------------------------

export type PullOptions = {
  /** Whether the scrolled content is at its top (a pull starts only there). */
  atTop: () => boolean;
  /** Each change of the pull (the phase and how far the indicator follows). */
  onchange: (phase: PullPhase, offset: number) => void;
  /** Letting go past the threshold: the phase stays "refreshing" until this settles. */
  onrefresh: () => Promise<unknown>;
};

/** `use:pullToRefresh={{ atTop, onchange, onrefresh }}` on the element around a scroller. */
export function pullToRefresh(node: HTMLElement, options: PullOptions) {
  let opts = options;
  let startY: number | null = null;
  let distance = 0;
  let busy = false;

  const begin = (e: TouchEvent) => {
    if (busy || e.touches.length !== 1 || !opts.atTop()) return;
    startY = e.touches[0].clientY;
    distance = 0;
  };
  const move = (e: TouchEvent) => {
    if (startY === null) return;
    const d = e.touches[0].clientY - startY;
    if (d <= 0 || !opts.atTop()) {
      if (distance > 0) opts.onchange("idle", 0);
      distance = 0;
      if (d < 0) startY = null; // scrolling down into the history: not a pull
      return;
    }
    distance = d;
    if (e.cancelable) e.preventDefault(); // no rubber band (or the browser's own refresh) under the indicator
    opts.onchange(pullPhase(distance), pullOffset(distance));
  };
  const end = () => {
    if (startY === null) return;
    startY = null;
    const phase = pullPhase(distance);
    distance = 0;
    if (phase !== "release") {
      opts.onchange("idle", 0);
      return;
    }
    busy = true;
    opts.onchange("refreshing", PULL_THRESHOLD / 2);
    void opts.onrefresh().finally(() => {
      busy = false;
      opts.onchange("idle", 0);
    });
  };
  const cancel = () => {
    if (startY === null) return;
    startY = null;
    distance = 0;
    opts.onchange("idle", 0);
  };
  // The move is not passive: a pull cancels the browser's own scrolling (and refresh) under the indicator.
  const stop = listen(node, [["touchstart", begin, PASSIVE], ["touchmove", move, { passive: false }],
    ["touchend", end, PASSIVE], ["touchcancel", cancel, PASSIVE]]);
  return {
    update(next: PullOptions) {
      opts = next;
    },
    destroy: stop,
  };
}
