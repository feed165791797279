// Phones (docs/client.md, "On phones"): the layout fills the dynamic viewport (100dvh, phone.css) and,
// while the on-screen keyboard is open, the visual viewport — iOS does not shrink the layout for the
// keyboard, so without this the composer would sit under it. The viewport meta asks for the safe areas
// (viewport-fit=cover, for env(safe-area-inset-*)) and for a layout resized by the keyboard where the
// browser knows interactive-widget (Chromium).
import "../phone.css";

function viewportMeta(): void {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="viewport"]');
  if (!meta) return;
  const parts = meta.content.split(",").map((p) => p.trim()).filter(Boolean);
  const has = (name: string) => parts.some((p) => p.startsWith(`${name}=`));
  if (!has("viewport-fit")) parts.push("viewport-fit=cover");
  if (!has("interactive-widget")) parts.push("interactive-widget=resizes-content");
  const content = parts.join(", ");
  if (content !== meta.content) meta.content = content;
}

/** The app's height while the keyboard covers part of the layout viewport, else none (100dvh rules). */
export function keyboardHeight(layout: number, visual: number): number | null {
  return visual > 0 && layout - visual > 80 ? visual : null;
}

export function followVisualViewport(): void {
  viewportMeta();
  const vv = window.visualViewport;
  if (!vv) return;
  const root = document.documentElement;
  let frame = 0;
  const apply = () => {
    frame = 0;
    const height = keyboardHeight(window.innerHeight, vv.height);
    if (height === null) {
      root.style.removeProperty("--app-height");
    } else {
      root.style.setProperty("--app-height", `${Math.round(height)}px`);
      // iOS scrolls the page to show the focused field; the layout already fits above the keyboard.
      if (window.scrollY !== 0) window.scrollTo(0, 0);
    }
  };
  const later = () => {
    if (!frame) frame = requestAnimationFrame(apply);
  };
  vv.addEventListener("resize", later);
  vv.addEventListener("scroll", later);
  apply();
}

if (typeof window !== "undefined" && typeof document !== "undefined") followVisualViewport();
