// The service worker's shell cache (web/public/sw.js, docs/client.md "The installable app"): after the build,
// the files every start needs — the entry's scripts and styles, the modules it imports statically and the
// icons — are written into the built sw.js, with a version made of their names (hashed, so a new build is a
// new cache and the worker changes byte for byte, which makes the browser install it). The first-frame words
// of every language (src/i18n/<language>/<language>.ts, about 15 KB gzipped each) are kept too: a new build
// deletes the old cache, and a start without a network after an update must still have its words. The page
// itself only ever fetches its own language. What loads on demand (settings, administration, the media
// client and their words) is kept when the page loads it (src/lib/worker.ts tells the worker what it loaded
// before the worker was there).

import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Plugin } from "vite";

/** The line of sw.js the build replaces. */
export const MARKER = /^.*\/\/ meadhall-shell: .*$/m;
const ICONS = ["/icons/icon-192.png", "/icons/icon-512.png", "/icons/icon-maskable-512.png",
  "/icons/apple-touch-icon.png", "/icons/icon.svg"];

/** The module of a language's first-frame words: src/i18n/ru/ru.ts. */
const FIRST_WORDS = /\/i18n\/([a-z]{2,3})\/\1\.ts$/;

interface ChunkLike {
  type: "chunk" | "asset";
  fileName: string;
  isEntry?: boolean;
  imports?: string[];
  facadeModuleId?: string | null;
  viteMetadata?: { importedCss?: Set<string>; importedAssets?: Set<string> };
}

/** The files of `bundle` a start needs, as URL paths, sorted. */
export function shellFiles(bundle: Record<string, ChunkLike>): string[] {
  const wanted = new Set<string>();
  const visit = (name: string): void => {
    const chunk = bundle[name];
    if (!chunk || wanted.has(name)) return;
    wanted.add(name);
    if (chunk.type !== "chunk") return;
    for (const css of chunk.viteMetadata?.importedCss ?? []) wanted.add(css);
    for (const asset of chunk.viteMetadata?.importedAssets ?? []) wanted.add(asset);
    for (const imported of chunk.imports ?? []) visit(imported);
  };
  for (const chunk of Object.values(bundle)) {
    if (chunk.type === "chunk" && (chunk.isEntry || FIRST_WORDS.test(chunk.facadeModuleId ?? ""))) visit(chunk.fileName);
  }
  return [...wanted].map((name) => `/${name}`).sort();
}

/** sw.js with its marker line holding the version and the files to precache. */
export function fillWorker(source: string, files: string[]): string {
  const all = [...files, ...ICONS];
  const version = createHash("sha256").update(all.join("\n")).digest("hex").slice(0, 12);
  const line = `const BUILD = ${JSON.stringify({ version, files: all })}; // meadhall-shell: written by the build`;
  if (!MARKER.test(source)) throw new Error("sw.js has no `// meadhall-shell:` line for the build to fill");
  return source.replace(MARKER, line);
}

export function shellCache(): Plugin {
  let outDir = "";
  let files: string[] = [];
  return {
    name: "meadhall-shell-cache",
    apply: "build",
    configResolved(config) {
      outDir = config.build.outDir.startsWith("/") ? config.build.outDir : join(config.root, config.build.outDir);
    },
    writeBundle(_options, bundle) {
      files = shellFiles(bundle as unknown as Record<string, ChunkLike>);
    },
    closeBundle() {
      // After the public directory (where sw.js comes from) is copied.
      const path = join(outDir, "sw.js");
      writeFileSync(path, fillWorker(readFileSync(path, "utf-8"), files));
    },
  };
}
