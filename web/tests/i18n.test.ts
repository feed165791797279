// The message catalogues are complete and sound, and no component holds a user-visible string of its own
// (docs/client.md, "Languages"): English and Russian have the same keys, every message parses as ICU
// MessageFormat with the same placeholders in both, Russian plurals name all three of its forms.

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { IntlMessageFormat } from "intl-messageformat";
import { bareStrings } from "./i18n-strings";

const I18N = join(__dirname, "..", "src", "i18n");
const LANGUAGES = ["en", "ru"] as const;
const PLURAL_FORMS: Record<(typeof LANGUAGES)[number], string[]> = { en: ["one", "other"], ru: ["one", "few", "many", "other"] };

function catalogue(language: string): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const file of readdirSync(join(I18N, language)).filter((f) => f.endsWith(".json")).sort()) {
    const area = file.replace(/\.json$/, "");
    const messages = JSON.parse(readFileSync(join(I18N, language, file), "utf8")) as Record<string, string>;
    for (const [key, text] of Object.entries(messages)) flat[`${area}.${key}`] = text;
  }
  return flat;
}

type Element = { type: number; value?: string; options?: Record<string, { value: Element[] }>; children?: Element[] };

/** The placeholders of a message, and the plural forms each plural names. */
function shape(text: string, language: string): { args: Set<string>; plurals: string[][] } {
  const ast = new IntlMessageFormat(text, language).getAst() as unknown as Element[];
  const args = new Set<string>();
  const plurals: string[][] = [];
  const walk = (elements: Element[]): void => {
    for (const e of elements) {
      if (e.type >= 1 && e.type <= 6 && e.value) args.add(e.value);
      if (e.type === 8 && e.value) args.add(`<${e.value}>`);
      if (e.type === 6 && e.options) plurals.push(Object.keys(e.options).filter((k) => !k.startsWith("=")));
      for (const option of Object.values(e.options ?? {})) walk(option.value);
      if (e.children) walk(e.children);
    }
  };
  walk(ast);
  return { args, plurals };
}

describe("the message catalogues", () => {
  const en = catalogue("en");
  const ru = catalogue("ru");

  it("have the same keys in English and Russian", () => {
    expect(Object.keys(ru).filter((k) => !(k in en)), "keys only in Russian").toEqual([]);
    expect(Object.keys(en).filter((k) => !(k in ru)), "keys missing in Russian").toEqual([]);
  });

  it("have no empty message", () => {
    const empty = [...Object.entries(en), ...Object.entries(ru)].filter(([, text]) => !text.trim()).map(([k]) => k);
    expect(empty).toEqual([]);
  });

  it("parse as ICU MessageFormat with the same placeholders in both languages", () => {
    const problems: string[] = [];
    for (const [key, text] of Object.entries(en)) {
      if (!(key in ru)) continue;
      try {
        const a = shape(text, "en");
        const b = shape(ru[key], "ru");
        const missing = [...a.args].filter((x) => !b.args.has(x));
        const extra = [...b.args].filter((x) => !a.args.has(x));
        if (missing.length || extra.length) problems.push(`${key}: placeholders differ (${missing} / ${extra})`);
      } catch (err) {
        problems.push(`${key}: ${String(err)}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("name every plural form of each language (Russian: one, few, many, other)", () => {
    const problems: string[] = [];
    for (const [language, messages] of [["en", en], ["ru", ru]] as const) {
      for (const [key, text] of Object.entries(messages)) {
        for (const forms of shape(text, language).plurals) {
          const lacking = PLURAL_FORMS[language].filter((f) => !forms.includes(f));
          if (lacking.length) problems.push(`${language} ${key}: no ${lacking.join(", ")}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("use no key that does not exist, and have none that nothing uses", () => {
    // Keys in code are written whole (`t("chat.reply")`); one made at run time is a prefix with a comment
    // `i18n-keys: errors.` naming it, and every key under such a prefix counts as used.
    const sources = readSources(join(I18N, ".."));
    const used = new Set<string>();
    const prefixes: string[] = [];
    for (const text of sources) {
      for (const m of text.matchAll(/\b(?:t|tParts|tMaybe|has)\(\s*["'`]([a-z]+\.[\w.-]+)["'`]/g)) used.add(m[1]);
      for (const m of text.matchAll(/i18n-keys:\s*([\w.-]+)/g)) prefixes.push(m[1]);
    }
    const unknown = [...used].filter((k) => !(k in en));
    expect(unknown, "keys used but missing").toEqual([]);
    const unused = Object.keys(en).filter((k) => !used.has(k) && !prefixes.some((p) => k.startsWith(p)) && !sources.some((s) => s.includes(`"${k}"`)));
    expect(unused, "keys nothing uses").toEqual([]);
  });
});

function readSources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, name.name);
    if (name.isDirectory()) {
      if (name.name !== "generated") out.push(...readSources(path));
    } else if (/\.(svelte|ts)$/.test(name.name) && !name.name.endsWith(".test.ts")) out.push(readFileSync(path, "utf8"));
  }
  return out;
}

describe("the components", () => {
  it("hold no user-visible string of their own: every word comes from the catalogues", () => {
    const found = bareStrings(join(__dirname, "..", "src"));
    const only = process.env.I18N_FILES?.split(",").filter(Boolean);
    const shown = only ? found.filter((f) => only.some((prefix) => f.file.startsWith(prefix))) : found;
    expect(shown.map((f) => `${f.file}:${f.line}: ${f.text}`)).toEqual([]);
  }, 120_000); // it parses every source file: slow on a busy machine
});
