import { beforeAll, describe, expect, it } from "vitest";

let parseRoute: typeof import("../lib/router.svelte").parseRoute;

beforeAll(async () => {
  // The router reads the page's address when it loads.
  (globalThis as unknown as { location: { pathname: string; search: string } }).location = { pathname: "/", search: "" };
  ({ parseRoute } = await import("../lib/router.svelte"));
});

describe("admin routes", () => {
  it("open Users by default and one user's detail under users", () => {
    expect(parseRoute("/admin")).toEqual({ name: "admin", section: "users" });
    expect(parseRoute("/admin/audit")).toEqual({ name: "admin", section: "audit" });
    expect(parseRoute("/admin/users/123")).toEqual({ name: "admin", section: "users", id: "123" });
    expect(parseRoute("/admin/servers/123")).toEqual({ name: "admin", section: "servers" });
  });
});
