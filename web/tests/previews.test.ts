import { describe, expect, it } from "vitest";
import { configure } from "../src/lib/api";
import { forgetPreviews, imageAllowed, linksOf, previewOf } from "../src/lib/previews";
import { keyBytes } from "../src/settings/user/notifications/push";

function answer(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

describe("link previews", () => {
  it("takes the first three distinct http(s) links, not those in code, without trailing punctuation", () => {
    expect(linksOf("see https://a.example/x, and http://b.example/y. `https://code.example` https://a.example/x"))
      .toEqual(["https://a.example/x", "http://b.example/y"]);
    expect(linksOf("https://1.example https://2.example https://3.example https://4.example")).toHaveLength(3);
    expect(linksOf("```\nhttps://block.example\n``` ftp://no.example javascript:alert(1)")).toEqual([]);
  });

  it("asks the service once per URL and stays silent on failures", async () => {
    forgetPreviews();
    const asked: string[] = [];
    configure({ fetch: (async (url: string) => {
      asked.push(url);
      if (url.includes("broken")) return answer(500, { error: { code: "internal.error", message: "x" } });
      return answer(200, { url: "https://a.example/", status: "ok", card: { title: "A", description: null, image_url: null, site_name: null },
        fetched_at: "2026-01-01T00:00:00Z", expires_at: "2026-01-02T00:00:00Z" });
    }) as typeof fetch });
    const [first, second] = await Promise.all([previewOf("https://a.example/"), previewOf("https://a.example/")]);
    expect(first?.card?.title).toBe("A");
    expect(second).toBe(first);
    expect(await previewOf("https://broken.example/")).toBeNull();
    expect(await previewOf("https://broken.example/")).toBeNull();
    expect(asked).toEqual(["/api/v1/link-previews?url=https%3A%2F%2Fa.example%2F", "/api/v1/link-previews?url=https%3A%2F%2Fbroken.example%2F"]);
  });

  it("shows only same-origin images (the content policy blocks others)", () => {
    expect(imageAllowed("https://cdn.example/a.png", "https://chat.example")).toBe(false);
    expect(imageAllowed("/files/1", "https://chat.example")).toBe(true);
    expect(imageAllowed("https://chat.example/files/2", "https://chat.example")).toBe(true);
    expect(imageAllowed(null, "https://chat.example")).toBe(false);
  });
});

describe("push keys", () => {
  it("turns the base64url public key into the bytes the browser takes", () => {
    expect([...keyBytes("BAEC_w")]).toEqual([4, 1, 2, 255]);
  });
});
