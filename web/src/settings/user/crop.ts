// The square avatar crop: the picture is shown in a square view of `view` pixels, scaled so that at zoom 1
// it just covers the square, and moved by an offset of its centre from the view's centre. The picture
// always covers the whole square, so the exported avatar has no empty corner.

export interface Crop {
  /** The picture's own size in pixels. */
  width: number;
  height: number;
  /** The side of the square view on screen, in CSS pixels. */
  view: number;
  /** 1 (the picture just covers the square) to MAX_ZOOM. */
  zoom: number;
  /** The picture's centre relative to the view's centre, in view pixels. */
  dx: number;
  dy: number;
}

export const MAX_ZOOM = 4;

/** The scale at which the shorter side of the picture fills the view. */
export function coverScale(width: number, height: number, view: number): number {
  return view / Math.min(width, height);
}

export function scaleOf(c: Crop): number {
  return coverScale(c.width, c.height, c.view) * c.zoom;
}

/** The same crop with the offset kept inside the range where the picture still covers the square. */
export function clamp(c: Crop): Crop {
  const zoom = Math.min(MAX_ZOOM, Math.max(1, c.zoom));
  const s = coverScale(c.width, c.height, c.view) * zoom;
  const maxX = Math.max(0, (c.width * s - c.view) / 2);
  const maxY = Math.max(0, (c.height * s - c.view) / 2);
  return { ...c, zoom, dx: Math.min(maxX, Math.max(-maxX, c.dx)), dy: Math.min(maxY, Math.max(-maxY, c.dy)) };
}

/** A fresh crop: centred, zoom 1. */
export function initialCrop(width: number, height: number, view: number): Crop {
  return { width, height, view, zoom: 1, dx: 0, dy: 0 };
}

/** Zooming keeps the point under the view's centre where it is. */
export function zoomTo(c: Crop, zoom: number): Crop {
  const z = Math.min(MAX_ZOOM, Math.max(1, zoom));
  const ratio = z / c.zoom;
  return clamp({ ...c, zoom: z, dx: c.dx * ratio, dy: c.dy * ratio });
}

export function moveBy(c: Crop, x: number, y: number): Crop {
  return clamp({ ...c, dx: c.dx + x, dy: c.dy + y });
}

/** Where the picture is drawn in the view (its top-left corner and its drawn size). */
export function drawRect(c: Crop): { x: number; y: number; w: number; h: number } {
  const s = scaleOf(c);
  const w = c.width * s;
  const h = c.height * s;
  return { x: c.view / 2 + c.dx - w / 2, y: c.view / 2 + c.dy - h / 2, w, h };
}

/** The square of the picture (in its own pixels) that the view shows: what the avatar becomes. */
export function sourceRect(c: Crop): { sx: number; sy: number; size: number } {
  const s = scaleOf(c);
  const d = drawRect(c);
  // `+ 0` turns a negative zero into a plain one.
  return { sx: -d.x / s + 0, sy: -d.y / s + 0, size: c.view / s };
}

/** The side of the exported avatar: the cropped square at most `max` pixels, never upscaled. */
export function outputSize(c: Crop, max = 512): number {
  return Math.max(1, Math.min(max, Math.round(sourceRect(c).size)));
}
