import { svelte } from "@sveltejs/vite-plugin-svelte";
import { defineConfig } from "vitest/config";
import { emojiData } from "./plugins/emoji-data.ts";
import { shellCache } from "./plugins/shell-cache.ts";

// The build lands inside the Python package, where the service serves it (meadhall/web/client.py):
// hashed files under /assets/ (cached for a year) and index.html (never cached). docs/client.md.
export default defineConfig({
  plugins: [svelte(), emojiData(), shellCache()],
  build: {
    outDir: "../meadhall/web/client",
    emptyOutDir: true,
    assetsDir: "assets",
    target: "es2022",
    // Inlined assets would be data: URLs; files keep the Content-Security-Policy simple.
    assetsInlineLimit: 0,
    // The largest chunk is LiveKit's client (~570 kB, ~150 kB gzipped): one library, fetched only when
    // someone joins voice or a call (a dynamic import in src/voice/), never part of the first download,
    // which tests/web/test_client_bundle.py keeps under 150 kB gzipped. The warning would only name it.
    chunkSizeWarningLimit: 600,
    rolldownOptions: {
      // Timings of slow plugins are a note for whoever tunes the build, not a warning for `make install`
      // on a busy two-core machine.
      checks: { bundlerTimings: false },
    },
  },
  server: {
    // `npm run dev` next to `make run`: the API and the gateway come from the service.
    proxy: {
      "/api": "http://localhost:8000",
      "/files": "http://localhost:8000",
      "/invite": "http://localhost:8000",
      "/gateway": { target: "ws://localhost:8000", ws: true },
    },
  },
  test: {
    include: ["tests/**/*.test.ts", "src/**/*.test.ts"],
    environment: "node",
    setupFiles: ["tests/setup-i18n.ts"],
  },
});
