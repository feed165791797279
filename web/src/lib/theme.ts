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

const systemDark = (): MediaQueryList | null =>
  typeof matchMedia === "function" ? matchMedia("(prefers-color-scheme: dark)") : null;
let following = false;

// The stylesheet knows two themes by `data-theme` alone; "system" resolves to one of them here and follows
// the system's changes while it is the choice.
export function applyTheme(choice: ThemeChoice = themeChoice()): void {
  const root = document.documentElement;
  const query = systemDark();
  const resolved = choice === "system" ? (query && !query.matches ? "light" : "dark") : choice;
  root.setAttribute("data-theme", resolved);
  if (choice === "system" && query && !following) {
    following = true;
    query.addEventListener("change", () => {
      if (themeChoice() === "system") applyTheme("system");
    });
  }
  try {
    if (choice === "system") localStorage.removeItem("theme");
    else localStorage.setItem("theme", choice);
  } catch {
    // Without storage the choice lasts for this page only.
  }
}
