// Types of Menu.svelte's entries and anchors (a .ts module so that any component may import them).

export interface MenuItem {
  label: string;
  /** Run after the menu closed (the focus is back on the menu button unless `refocus` is false). */
  onselect?: () => void;
  /** A menuitemcheckbox, checked or not. */
  checked?: boolean;
  danger?: boolean;
  disabled?: boolean;
  /** A short note at the end of the row (e.g. "Muted"), hidden from assistive technology. */
  hint?: string;
  /** A submenu instead of an action. */
  items?: MenuEntry[];
  /** Whether the focus returns to the menu button after the choice (default true; false when the choice opens a dialog that takes the focus). */
  refocus?: boolean;
}

export interface MenuSeparator {
  separator: true;
}

export type MenuEntry = MenuItem | MenuSeparator;

export type MenuAnchor =
  /** Under a button, aligned with its end (a "⋯" at the end of a row) or its start (a wide button, at least as wide). */
  | { kind: "below"; rect: DOMRect; align?: "start" | "end" }
  | { kind: "beside"; rect: DOMRect }
  | { kind: "point"; x: number; y: number };
