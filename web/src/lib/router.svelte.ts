// The client's routes (docs/client.md, "Routes") over the History API: the service answers index.html
// for each of them, and the client draws the screen from the path.

export type Route =
  | { name: "login"; next: string | null }
  | { name: "register"; next: string | null }
  | { name: "home"; conversationId: string | null }
  | { name: "room"; guildId: string; channelId: string | null }
  | { name: "guildSettings"; guildId: string; section: string }
  | { name: "settings"; section: string }
  | { name: "admin"; section: string; id?: string }
  | { name: "root" }
  | { name: "unknown" };

export function parseRoute(pathname: string, search = ""): Route {
  const parts = pathname.split("/").filter(Boolean).map(decodeURIComponent);
  const next = new URLSearchParams(search).get("next");
  const safeNext = next && next.startsWith("/") && !next.startsWith("//") ? next : null;
  if (parts.length === 0) return { name: "root" };
  if (parts[0] === "login") return { name: "login", next: safeNext };
  if (parts[0] === "register") return { name: "register", next: safeNext };
  if (parts[0] === "channels") {
    if (parts[1] === "@me" || parts.length === 1) return { name: "home", conversationId: parts[2] ?? null };
    if (parts[2] === "settings") return { name: "guildSettings", guildId: parts[1], section: parts[3] ?? "overview" };
    return { name: "room", guildId: parts[1], channelId: parts[2] ?? null };
  }
  if (parts[0] === "settings") return { name: "settings", section: parts[1] ?? "profile" };
  if (parts[0] === "admin") {
    // /admin/users/<user_id> is one user's detail view inside the users section.
    const section = parts[1] ?? "users";
    return parts[2] && section === "users" ? { name: "admin", section, id: parts[2] } : { name: "admin", section };
  }
  return { name: "unknown" };
}

export const router = $state({ route: parseRoute(location.pathname, location.search) as Route });

export function navigate(path: string, options: { replace?: boolean } = {}): void {
  if (path === location.pathname + location.search) return;
  if (options.replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  const url = new URL(path, location.origin);
  router.route = parseRoute(url.pathname, url.search);
}

/** Paths the service renders itself: followed with a full page load, not drawn by the client. */
function serverPath(path: string): boolean {
  return /^\/(invite|api|files|static|healthz|readyz)(\/|$)/.test(path);
}

export function startRouter(): void {
  addEventListener("popstate", () => {
    router.route = parseRoute(location.pathname, location.search);
  });
  document.addEventListener("click", (ev) => {
    if (ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
    const a = (ev.target as Element | null)?.closest?.("a");
    if (!a || a.target || a.hasAttribute("download")) return;
    const href = a.getAttribute("href");
    if (!href || !href.startsWith("/") || href.startsWith("//") || serverPath(href)) return;
    ev.preventDefault();
    navigate(href);
  });
}
