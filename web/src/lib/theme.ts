// Dark and light themes: the system's choice by default, or the one picked in the user menu (kept on
// this device; it is a display preference, nothing secret).

export type ThemeChoice = "system" | "dark" | "light";

export function themeChoice(): ThemeChoice {
  try {
    const v = localStorage.getItem("theme");
    return v === "dark" || v === "light" ? v : "system";
  } catch {
    return "system";
  }
}

export function applyTheme(choice: ThemeChoice = themeChoice()): void {
  const root = document.documentElement;
  if (choice === "system") root.removeAttribute("data-theme");
  else root.setAttribute("data-theme", choice);
  try {
    if (choice === "system") localStorage.removeItem("theme");
    else localStorage.setItem("theme", choice);
  } catch {
    // Without storage the choice lasts for this page only.
  }
}
