import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { LONG_PRESS_MS, longPress, movedTooFar, pullOffset, pullPhase, swipeAction } from "../src/lib/gestures";
import { installHintKind, isIosSafari } from "../src/lib/install";
import { keyboardHeight } from "../src/lib/viewport";

describe("edge swipe", () => {
  it("opens the drawer on a swipe right from the left edge", () => {
    expect(swipeAction({ x: 8, y: 300 }, { x: 160, y: 310 }, false)).toBe("open");
  });
  it("does not open from the middle of the screen, nor on a short or mostly vertical move", () => {
    expect(swipeAction({ x: 120, y: 300 }, { x: 300, y: 300 }, false)).toBeNull();
    expect(swipeAction({ x: 5, y: 300 }, { x: 40, y: 300 }, false)).toBeNull();
    expect(swipeAction({ x: 5, y: 100 }, { x: 80, y: 400 }, false)).toBeNull();
  });
  it("closes an open drawer on a swipe left anywhere, and a swipe right keeps it open", () => {
    expect(swipeAction({ x: 250, y: 300 }, { x: 60, y: 290 }, true)).toBe("close");
    expect(swipeAction({ x: 5, y: 300 }, { x: 200, y: 300 }, true)).toBeNull();
    expect(swipeAction({ x: 250, y: 300 }, { x: 60, y: 290 }, false)).toBeNull();
  });
});

describe("long press", () => {
  it("counts movement beyond 10 px as a drift", () => {
    expect(movedTooFar({ x: 0, y: 0 }, { x: 6, y: 6 })).toBe(false);
    expect(movedTooFar({ x: 0, y: 0 }, { x: 8, y: 8 })).toBe(true);
  });

  type Fake = EventTarget & { style: { props: Map<string, string>; setProperty(k: string, v: string): void; removeProperty(k: string): void } };
  let node: Fake;
  const saved = globalThis.window;
  beforeEach(() => {
    vi.useFakeTimers();
    const props = new Map<string, string>();
    node = Object.assign(new EventTarget(), {
      style: { props, setProperty: (k: string, v: string) => void props.set(k, v), removeProperty: (k: string) => void props.delete(k) },
    });
    (globalThis as { window: unknown }).window = new EventTarget();
  });
  afterEach(() => {
    vi.useRealTimers();
    (globalThis as { window: unknown }).window = saved;
  });
  const pointer = (type: string, x: number, y: number, pointerType = "touch") =>
    Object.assign(new Event(type), { pointerType, isPrimary: true, clientX: x, clientY: y });

  it("fires after ~500 ms of a resting finger, without a callout while pressing", () => {
    const onpress = vi.fn();
    const action = longPress(node as unknown as HTMLElement, { onpress });
    node.dispatchEvent(pointer("pointerdown", 50, 50));
    expect(node.style.props.get("-webkit-touch-callout")).toBe("none");
    node.dispatchEvent(pointer("pointermove", 53, 52));
    vi.advanceTimersByTime(LONG_PRESS_MS - 1);
    expect(onpress).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(onpress).toHaveBeenCalledTimes(1);
    expect(onpress.mock.calls[0][0].clientX).toBe(50);
    expect(node.style.props.has("-webkit-touch-callout")).toBe(false);
    action.destroy();
  });

  it("is cancelled by moving, lifting early, scrolling or a mouse", () => {
    const onpress = vi.fn();
    longPress(node as unknown as HTMLElement, { onpress });
    node.dispatchEvent(pointer("pointerdown", 50, 50));
    node.dispatchEvent(pointer("pointermove", 50, 65));
    vi.advanceTimersByTime(1000);
    node.dispatchEvent(pointer("pointerdown", 50, 50));
    vi.advanceTimersByTime(200);
    node.dispatchEvent(pointer("pointerup", 50, 50));
    vi.advanceTimersByTime(1000);
    node.dispatchEvent(pointer("pointerdown", 50, 50));
    window.dispatchEvent(new Event("scroll"));
    vi.advanceTimersByTime(1000);
    node.dispatchEvent(pointer("pointerdown", 50, 50, "mouse"));
    vi.advanceTimersByTime(1000);
    expect(onpress).not.toHaveBeenCalled();
  });
});

describe("pull to refresh", () => {
  it("moves from pulling to release at the threshold", () => {
    expect(pullPhase(0)).toBe("idle");
    expect(pullPhase(30)).toBe("pull");
    expect(pullPhase(64)).toBe("release");
    expect(pullOffset(40)).toBe(20);
    expect(pullOffset(400)).toBe(80);
    expect(pullOffset(-5)).toBe(0);
  });
});

describe("install hint", () => {
  const android = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Mobile Safari/537.36";
  const iphone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";
  const iphoneChrome = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0 Mobile/15E148 Safari/604.1";
  const base = { userAgent: android, maxTouchPoints: 5, standalone: false, canPrompt: true, narrow: true, signedIn: true, done: false };

  it("offers the install dialog when the browser gave a prompt", () => {
    expect(installHintKind(base)).toBe("prompt");
  });
  it("tells Share → Add to Home Screen on iOS Safari only", () => {
    expect(installHintKind({ ...base, userAgent: iphone, canPrompt: false })).toBe("ios");
    expect(isIosSafari(iphoneChrome, 5)).toBe(false);
    expect(installHintKind({ ...base, canPrompt: false })).toBeNull();
  });
  it("never shows installed, dismissed, wide or signed out", () => {
    expect(installHintKind({ ...base, standalone: true })).toBeNull();
    expect(installHintKind({ ...base, done: true })).toBeNull();
    expect(installHintKind({ ...base, narrow: false })).toBeNull();
    expect(installHintKind({ ...base, signedIn: false })).toBeNull();
  });
});

describe("keyboard", () => {
  it("follows the visual viewport only while the keyboard covers the layout", () => {
    expect(keyboardHeight(844, 844)).toBeNull();
    expect(keyboardHeight(844, 800)).toBeNull();
    expect(keyboardHeight(844, 500)).toBe(500);
  });
});
