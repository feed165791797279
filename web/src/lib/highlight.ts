// Syntax highlighting of code blocks, loaded on demand: highlight.js's core and each language are their
// own chunks, fetched the first time a block in that language is shown (the first download stays small,
// docs/client.md). highlight.js answers markup; it is read back here into runs of text and class names that
// the screen renders as text in spans, so no HTML from a message ever reaches the page as HTML.

import type { HLJSApi, LanguageFn } from "highlight.js";

type Loader = () => Promise<{ default: LanguageFn }>;

const LANGUAGES: Record<string, Loader> = {
  bash: () => import("highlight.js/lib/languages/bash"),
  c: () => import("highlight.js/lib/languages/c"),
  cpp: () => import("highlight.js/lib/languages/cpp"),
  csharp: () => import("highlight.js/lib/languages/csharp"),
  css: () => import("highlight.js/lib/languages/css"),
  diff: () => import("highlight.js/lib/languages/diff"),
  dockerfile: () => import("highlight.js/lib/languages/dockerfile"),
  go: () => import("highlight.js/lib/languages/go"),
  ini: () => import("highlight.js/lib/languages/ini"),
  java: () => import("highlight.js/lib/languages/java"),
  javascript: () => import("highlight.js/lib/languages/javascript"),
  json: () => import("highlight.js/lib/languages/json"),
  kotlin: () => import("highlight.js/lib/languages/kotlin"),
  lua: () => import("highlight.js/lib/languages/lua"),
  makefile: () => import("highlight.js/lib/languages/makefile"),
  markdown: () => import("highlight.js/lib/languages/markdown"),
  php: () => import("highlight.js/lib/languages/php"),
  python: () => import("highlight.js/lib/languages/python"),
  ruby: () => import("highlight.js/lib/languages/ruby"),
  rust: () => import("highlight.js/lib/languages/rust"),
  scss: () => import("highlight.js/lib/languages/scss"),
  sql: () => import("highlight.js/lib/languages/sql"),
  swift: () => import("highlight.js/lib/languages/swift"),
  typescript: () => import("highlight.js/lib/languages/typescript"),
  xml: () => import("highlight.js/lib/languages/xml"),
  yaml: () => import("highlight.js/lib/languages/yaml"),
};

const ALIASES: Record<string, string> = {
  sh: "bash", shell: "bash", zsh: "bash", console: "bash", "c++": "cpp", cs: "csharp", "c#": "csharp",
  docker: "dockerfile", golang: "go", toml: "ini", js: "javascript", jsx: "javascript", mjs: "javascript",
  kt: "kotlin", make: "makefile", md: "markdown", py: "python", python3: "python", rb: "ruby", rs: "rust",
  ts: "typescript", tsx: "typescript", html: "xml", svg: "xml", svelte: "xml", yml: "yaml",
};

/** The language a block's tag names, when it is one this client highlights. */
export function languageOf(tag: string | null): string | null {
  if (!tag) return null;
  const name = ALIASES[tag.toLowerCase()] ?? tag.toLowerCase();
  return name in LANGUAGES ? name : null;
}

export interface Token {
  text: string;
  /** highlight.js class names (`hljs-keyword`), nested ones joined; empty for plain text. */
  cls: string;
}

let core: Promise<HLJSApi> | null = null;

/** The block's code as highlighted runs, or null when the language is not one this client knows. */
export async function highlight(code: string, tag: string | null): Promise<Token[] | null> {
  const name = languageOf(tag);
  if (!name) return null;
  core ??= import("highlight.js/lib/core").then((m) => m.default as HLJSApi);
  const hljs = await core;
  if (!hljs.getLanguage(name)) hljs.registerLanguage(name, (await LANGUAGES[name]()).default);
  return tokensOf(hljs.highlight(code, { language: name, ignoreIllegals: true }).value);
}

const ENTITIES: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#x27;": "'", "&#39;": "'" };

/** highlight.js's markup (escaped text in `<span class="…">`) read back into runs. Anything else it could
 * hold stays text. */
export function tokensOf(html: string): Token[] {
  const out: Token[] = [];
  const stack: string[] = [];
  const push = (raw: string) => {
    if (!raw) return;
    const text = raw.replace(/&(?:amp|lt|gt|quot|#x27|#39);/g, (e) => ENTITIES[e]);
    const cls = stack.join(" ");
    const prev = out[out.length - 1];
    if (prev && prev.cls === cls) prev.text += text;
    else out.push({ text, cls });
  };
  let last = 0;
  for (const m of html.matchAll(/<span class="([\w -]{1,80})">|<\/span>/g)) {
    push(html.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[1] !== undefined) stack.push(m[1]);
    else stack.pop();
  }
  push(html.slice(last));
  return out;
}
