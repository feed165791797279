// Finds user-visible English written straight into the client's sources instead of coming from the
// message catalogues (src/i18n/): text between tags, the attributes a person reads or hears (aria-label,
// title, placeholder, alt…), and string literals in scripts and template expressions that read as words
// ("Save changes", "Saving…", `{ label: "Delete" }`). Used by tests/i18n.test.ts, which fails on any.
//
// A line holding `i18n-ignore` (or following a line that holds it) is passed over: for the rare string
// that is the same in every language (a product name, a language's own name), with a reason beside it.

import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { parse } from "svelte/compiler";

export interface Finding {
  file: string;
  line: number;
  text: string;
}

/** Attributes whose value a person reads or hears. */
const READ_ATTRIBUTES = new Set([
  "aria-label", "aria-description", "aria-placeholder", "aria-roledescription", "aria-valuetext", "title",
  "placeholder", "alt", "label", "summary",
]);
/** Properties of objects whose string values end up on screen. */
const READ_PROPERTIES = new Set([
  "label", "title", "text", "placeholder", "description", "message", "hint", "heading", "summary", "confirm",
  "confirmLabel", "ariaLabel", "name", "words", "caption", "help", "empty", "action", "body", "question",
]);
/** Words that are the same in every language: the product, the two languages' own names. */
const SAME_EVERYWHERE = new Set(["Meadhall", "English", "Русский"]);
const LATIN = /[A-Za-z]/;
/** "Save changes", "Sign in to Meadhall": a capitalised word and more words. */
const SENTENCE = /^[A-Z][a-z’']+(?:[ \u00a0]+[^\s]+)+/;
/** Keyboard keys, HTTP and media names, CSS keywords that look like words and are not read. */
const NOT_WORDS = /^(?:Enter|Escape|Tab|Backspace|Delete|Home|End|PageUp|PageDown|Arrow(?:Up|Down|Left|Right)|Space|Shift|Control|Alt|Meta|GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS|Content-Type|Authorization|Accept|Retry-After|X-[\w-]+|[A-Z][A-Za-z]*Error|NotAllowedError|AbortError|Infinity|NaN)$/;

function ignored(lines: string[], line: number): boolean {
  return (lines[line - 1] ?? "").includes("i18n-ignore") || (lines[line - 2] ?? "").includes("i18n-ignore");
}

function lineOf(source: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < source.length; i++) if (source.charCodeAt(i) === 10) line++;
  return line;
}

function isReadText(text: string): boolean {
  const trimmed = text.replace(/\s+/g, " ").trim();
  return LATIN.test(trimmed) && !SAME_EVERYWHERE.has(trimmed);
}

/** A string literal of a script that reads as words. */
function looksRead(text: string, propertyName: string | null): boolean {
  const trimmed = text.trim();
  if (!LATIN.test(trimmed) || SAME_EVERYWHERE.has(trimmed) || NOT_WORDS.test(trimmed)) return false;
  if (/^[\w.-]+\/[\w./-]*$/.test(trimmed) || /^[a-z][\w-]*(?:\.[\w-]+)+$/.test(trimmed)) return false; // paths, keys
  if (propertyName && READ_PROPERTIES.has(propertyName) && /^[A-Z]/.test(trimmed)) return true;
  if (SENTENCE.test(trimmed)) return true;
  return /[A-Za-z].*(?:…|\.\.\.)$/.test(trimmed) && /^[A-Z]/.test(trimmed);
}

/** String literals in TypeScript that read as words, skipping imports, errors thrown for developers and
 * console output. `offset`/`lineBase` place a script block of a .svelte file in its file. */
function scanScript(code: string, file: string, lines: string[], lineBase: number, out: Finding[], markup = false): void {
  const source = ts.createSourceFile(file, code, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node) || ts.isLiteralTypeNode(node)) return;
    if (ts.isCallExpression(node)) {
      const callee = node.expression.getText(source);
      if (/^console\.|^(?:querySelector|querySelectorAll|addEventListener|removeEventListener|matchMedia|getAttribute|setAttribute|import)$|\.(?:querySelector(?:All)?|addEventListener|removeEventListener|getAttribute|setAttribute|matchMedia|startsWith|endsWith|includes|closest|toggle|add|remove|contains)$/.test(callee)) return;
    }
    if (ts.isNewExpression(node) && /Error$/.test(node.expression.getText(source))) return;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
      const parent = node.parent;
      let property: string | null = null;
      if (parent && ts.isPropertyAssignment(parent) && parent.initializer === node) property = parent.name.getText(source);
      if (parent && ts.isPropertyAssignment(parent) && parent.name === node) return; // a key
      if (parent && ts.isElementAccessExpression(parent)) return;
      if (parent && ts.isBinaryExpression(parent) && /===|!==|==|!=/.test(parent.operatorToken.getText(source))) return;
      if (parent && ts.isCaseClause(parent)) return;
      const text = node.text;
      const read = markup ? /^[A-Z][a-z]+$/.test(text.trim()) || looksRead(text, property) : looksRead(text, property);
      if (read) {
        const line = lineBase + source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        if (!ignored(lines, line)) out.push({ file, line, text });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

type AnyNode = { type?: string; start?: number; end?: number; [key: string]: unknown };

function scanSvelte(path: string, file: string, out: Finding[]): void {
  const source = readFileSync(path, "utf8");
  const lines = source.split("\n");
  const ast = parse(source, { modern: true }) as unknown as AnyNode;
  for (const block of [ast.instance, ast.module] as (AnyNode | null)[]) {
    if (!block || block.start === undefined) continue;
    const code = source.slice(block.start, block.end);
    const open = code.indexOf(">") + 1;
    const body = code.slice(open, code.lastIndexOf("</script"));
    scanScript(body, file, lines, lineOf(source, block.start + open), out);
  }
  const seen = new Set<unknown>();
  const scanExpression = (expression: AnyNode | undefined, markup: boolean): void => {
    if (!expression || expression.start === undefined || expression.end === undefined) return;
    const code = source.slice(expression.start, expression.end);
    scanScript(`(${code})`, file, lines, lineOf(source, expression.start), out, markup);
  };
  // `attribute`: the name of the attribute whose value is being walked, null in the markup's text.
  const walk = (node: unknown, attribute: string | null): void => {
    if (!node || typeof node !== "object" || seen.has(node)) return;
    seen.add(node);
    if (Array.isArray(node)) {
      for (const child of node) walk(child, attribute);
      return;
    }
    const n = node as AnyNode;
    if (n.type === "Script" || n.type === "StyleSheet") return;
    const read = attribute === null || READ_ATTRIBUTES.has(attribute);
    if (n.type === "Text" && typeof n.data === "string" && n.start !== undefined) {
      if (read && isReadText(n.data)) {
        const line = lineOf(source, n.start);
        if (!ignored(lines, line)) out.push({ file, line, text: n.data.trim() });
      }
      return;
    }
    if (n.type === "ExpressionTag") {
      // A string in `{…}` shown as text (or as a read attribute) counts even as one capitalised word.
      scanExpression(n.expression as AnyNode, read);
      return;
    }
    if (n.type === "Attribute" || n.type === "BindDirective" || n.type === "OnDirective" || n.type === "ClassDirective" || n.type === "StyleDirective" || n.type === "UseDirective") {
      if (Array.isArray(n.value) || (n.value && typeof n.value === "object")) walk(n.value, String(n.name));
      else if (n.expression) scanExpression(n.expression as AnyNode, false);
      return;
    }
    for (const [key, value] of Object.entries(n)) {
      if (key === "metadata" || key === "parent") continue;
      if (value && typeof value === "object" && !Array.isArray(value) && (value as AnyNode).type && !["Fragment", "Text", "ExpressionTag"].includes(String((value as AnyNode).type)) && key !== "fragment" && key !== "body" && key !== "consequent" && key !== "alternate" && key !== "pending" && key !== "then" && key !== "catch" && key !== "fallback" && !/Element|Block|Tag|Component|Attribute|Directive/.test(String((value as AnyNode).type))) {
        // An expression of a block or tag ({#if}, {#each}, {@const}, {@html}): scanned as script.
        scanExpression(value as AnyNode, false);
        continue;
      }
      walk(value, attribute);
    }
  };
  walk(ast.fragment, null);
}

function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name === "generated" || name === "i18n") continue;
      files.push(...sourceFiles(path));
    } else if ((name.endsWith(".svelte") || name.endsWith(".ts")) && !name.endsWith(".test.ts") && !name.endsWith(".d.ts")) {
      files.push(path);
    }
  }
  return files;
}

/** Every bare user-visible string under `root` (web/src), by file and line. */
export function bareStrings(root: string): Finding[] {
  const out: Finding[] = [];
  for (const path of sourceFiles(root)) {
    const file = relative(root, path);
    if (path.endsWith(".svelte")) scanSvelte(path, file, out);
    else {
      const source = readFileSync(path, "utf8");
      scanScript(source, file, source.split("\n"), 1, out);
    }
  }
  return out;
}
