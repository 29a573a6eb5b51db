/**
 * docs/errors.md lists every error code the product raises, and nothing else.
 *
 * The source tree (core/, plugins/, infra/, harness/, bin/; a directory that does not exist yet is skipped) is
 * scanned for codes in three forms:
 * - literals: "E_X", 'E_X' or `E_X` outside comments;
 * - prefix builders: a function that builds `${o.code}_SUFFIX` from a prefix it is given (core/process.ts
 *   waitListening, probeVersion); every call that passes `code: "E_P"` yields E_P_SUFFIX, and a function that passes
 *   its own `code: o.code` on becomes a builder with the same suffixes. A literal passed in this way is a prefix, not
 *   a code of its own;
 * - kind families: `E_P_${kind.toUpperCase()...}` where `kind` is typed by a union of string literals in the same
 *   file (core/events/griddb-webapi.ts GridDbErrorKind): one code per literal.
 * A documented code is a table row of docs/errors.md whose first cell is the code in backticks.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SOURCE_DIRS = ["core", "plugins", "infra", "harness", "bin", "ui"];
const SOURCE_EXT = /\.(ts|mts|cts|js|mjs|cjs)$/;

interface SourceFile {
  file: string;
  text: string;
}

/** Every source file under the given directories of `root` (missing directories are skipped). */
function sourceFiles(root: string, dirs: readonly string[]): SourceFile[] {
  const out: SourceFile[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      if (name === "node_modules" || name.startsWith(".")) continue;
      const p = path.join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (SOURCE_EXT.test(name))
        out.push({ file: path.relative(root, p), text: readFileSync(p, "utf8") });
    }
  };
  for (const d of dirs) {
    const abs = path.join(root, d);
    if (existsSync(abs) && statSync(abs).isDirectory()) walk(abs);
  }
  return out;
}

/**
 * Blank out comments that start a line (`// …`) and block comments that open a line (`/* …`, `/** …`), keeping
 * offsets and line breaks. Comments after code on the same line are left alone (they rarely name codes).
 */
function stripComments(text: string): string {
  const lines = text.split("\n");
  let inBlock = false;
  return lines
    .map((line) => {
      const t = line.trimStart();
      if (inBlock) {
        if (line.includes("*/")) inBlock = false;
        return " ".repeat(line.length);
      }
      if (t.startsWith("//")) return " ".repeat(line.length);
      if (t.startsWith("/*")) {
        const end = line.indexOf("*/", line.indexOf("/*") + 2);
        if (end < 0) inBlock = true;
        else return " ".repeat(end + 2) + line.slice(end + 2);
        return " ".repeat(line.length);
      }
      return line;
    })
    .join("\n");
}

/** The name of the function whose body holds offset `at` (nearest `function NAME(` or `NAME = (…) =>` before it). */
function enclosingFunction(text: string, at: number): string | null {
  const before = text.slice(0, at);
  const re =
    /(?:function\s+([A-Za-z_$][\w$]*)\s*[<(])|(?:(?:const|let)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?\()/g;
  let name: string | null = null;
  for (const m of before.matchAll(re)) name = m[1] ?? m[2] ?? null;
  return name;
}

/**
 * The text of the call's argument list starting at the `(` at offset `open`, up to its matching `)`. Parentheses
 * inside '…' and "…" strings and escaped ones (`\(` in a regular expression) do not count.
 */
function callArguments(text: string, open: number): string {
  let depth = 0;
  let quote: string | null = null;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (text[i - 1] === "\\") continue;
    if (quote) {
      if (c === quote || c === "\n") quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return text.slice(open + 1, i);
  }
  return text.slice(open + 1);
}

/** What the scan found: the codes, and where each one comes from (for messages). */
interface CodeScan {
  codes: Map<string, Set<string>>;
  problems: string[];
}

/** Collect every error code the given files can raise (see the file comment for the three forms). */
function scanCodes(files: readonly SourceFile[]): CodeScan {
  const codes = new Map<string, Set<string>>();
  const problems: string[] = [];
  const add = (code: string, file: string): void => {
    if (!codes.has(code)) codes.set(code, new Set());
    codes.get(code)!.add(file);
  };
  const stripped = files.map((f) => ({ file: f.file, text: stripComments(f.text) }));

  // Prefix builders: function name → suffixes it appends to the prefix it is given.
  const builders = new Map<string, Set<string>>();
  for (const f of stripped) {
    for (const m of f.text.matchAll(/`\$\{\s*[\w$.?]*code\s*\}_([A-Z][A-Z0-9_]*)`/g)) {
      const fn = enclosingFunction(f.text, m.index!);
      if (!fn) {
        problems.push(`${f.file}: a code built from a prefix outside any function`);
        continue;
      }
      if (!builders.has(fn)) builders.set(fn, new Set());
      builders.get(fn)!.add(m[1]!);
    }
  }
  // Calls into builders: literal prefixes give codes; a passed-on `code: x.code` makes the caller a builder too.
  const consumed = new Set<string>(); // "file:offset" of literals used as prefixes
  const prefixed: Array<{ prefix: string; fn: string; file: string }> = [];
  for (let changed = true; changed;) {
    changed = false;
    for (const f of stripped) {
      for (const [fn, suffixes] of [...builders]) {
        const call = new RegExp(`(?<![\\w$.])${fn.replace(/\$/g, "\\$")}\\s*\\(`, "g");
        for (const m of f.text.matchAll(call)) {
          const before = f.text.slice(Math.max(0, m.index! - 40), m.index!);
          if (/function\s*$/.test(before)) continue; // the declaration itself
          const open = m.index! + m[0].length - 1;
          const args = callArguments(f.text, open);
          for (const lit of args.matchAll(/\bcode\s*:\s*(["'])(E_[A-Z0-9_]+)\1/g)) {
            const key = `${f.file}:${open + 1 + lit.index! + lit[0].indexOf(lit[2]!) - 1}`;
            if (!consumed.has(key)) {
              consumed.add(key);
              prefixed.push({ prefix: lit[2]!, fn, file: f.file });
            }
          }
          if (/\bcode\s*:\s*[A-Za-z_$][\w$]*\.code\b/.test(args)) {
            const caller = enclosingFunction(f.text, m.index!);
            if (caller && caller !== fn) {
              const known = builders.get(caller) ?? new Set<string>();
              const before = known.size;
              for (const s of suffixes) known.add(s);
              if (known.size !== before) {
                builders.set(caller, known);
                changed = true;
              }
            }
          }
        }
      }
    }
  }
  for (const { prefix, fn, file } of prefixed)
    for (const s of builders.get(fn) ?? []) add(`${prefix}_${s}`, file);

  // Kind families: `E_P_${kind.toUpperCase()…}` with `kind: SomeKind` and `type SomeKind = "a" | "b"` in the file.
  for (const f of stripped) {
    for (const m of f.text.matchAll(/`(E_[A-Z0-9_]*_)\$\{\s*([A-Za-z_$][\w$]*)([^}`]*)\}`/g)) {
      const [, prefix, ident, rest] = m as unknown as [string, string, string, string];
      const typed = new RegExp(`\\b${ident}\\s*:\\s*([A-Z][\\w$]*)`).exec(f.text);
      const union = typed ? new RegExp(`type\\s+${typed[1]}\\s*=\\s*([^;]+);`).exec(f.text) : null;
      const literals = union ? [...union[1]!.matchAll(/"([^"]+)"/g)].map((x) => x[1]!) : [];
      if (!/\.toUpperCase\(\)/.test(rest) || literals.length === 0) {
        problems.push(
          `${f.file}: cannot expand the code family ${prefix}\${${ident}${rest}} (no string-literal union type for ${ident} in the file)`,
        );
        continue;
      }
      const all = /replaceAll\(|\/-\/g/.test(rest);
      const hyphen = /replace(All)?\(\s*(["'])-\2\s*,\s*(["'])_\3\s*\)|\/-\/g/.test(rest);
      for (const l of literals) {
        const up = l.toUpperCase();
        add(prefix + (hyphen ? (all ? up.replaceAll("-", "_") : up.replace("-", "_")) : up), f.file);
      }
    }
  }

  // Literals not used as prefixes.
  for (const f of stripped) {
    for (const m of f.text.matchAll(/(["'`])(E_[A-Z0-9_]+)\1/g)) {
      if (consumed.has(`${f.file}:${m.index!}`)) continue;
      add(m[2]!, f.file);
    }
  }
  return { codes, problems };
}

/** The codes docs/errors.md documents: table rows whose first cell is a code in backticks. */
function documentedCodes(markdown: string): Map<string, number> {
  const out = new Map<string, number>();
  markdown.split("\n").forEach((line, i) => {
    const m = /^\|\s*`(E_[A-Z0-9_]+)`\s*\|/.exec(line);
    if (m) out.set(m[1]!, i + 1);
  });
  return out;
}

describe("the error-code scanner (synthetic sources)", () => {
  const files: SourceFile[] = [
    {
      file: "a.ts",
      text: [
        '/** e.g. "E_ONLY_IN_A_COMMENT" */',
        '// throw new Error("E_COMMENTED_OUT")',
        "export function waitFor(o: { code: string }) {",
        "  return [`${o.code}_START`, `${o.code}_READY`];",
        "}",
        "export function startDaemon(o: { code: string }) {",
        "  return waitFor({ daemon: 'x', code: o.code });",
        "}",
        "export function probe(p: { code: string }) { throw new Error(`${p.code}_VERSION`); }",
        'export type WidgetKind = "row-invalid" | "auth";',
        'class WidgetError { constructor(readonly kind: WidgetKind) { super(`E_WIDGET_${kind.toUpperCase().replace("-", "_")}`); } }',
      ].join("\n"),
    },
    {
      file: "b.ts",
      text: [
        'startDaemon({ code: "E_DAEMON", port: 1 });',
        'probe({ binary: \'x\', patterns: [/^x \\((\\d+)/m, ")"], code: "E_TOOL" });',
        'startDaemon({ port: 2 }); const later = { code: "E_NOT_A_PREFIX" };',
        "throw new ConfigurationError(\"E_DAEMON\", 'also a code of its own');",
        "const x = 'E_SINGLE'; const y = `E_BACKTICK`;",
      ].join("\n"),
    },
  ];
  const { codes, problems } = scanCodes(files);

  it("finds literals in every quote style, and none that only comments mention", () => {
    expect(codes.has("E_SINGLE")).toBe(true);
    expect(codes.has("E_BACKTICK")).toBe(true);
    expect(codes.has("E_ONLY_IN_A_COMMENT")).toBe(false);
    expect(codes.has("E_COMMENTED_OUT")).toBe(false);
  });

  it("expands prefixes through builders, also through a function that passes its code on", () => {
    expect([...codes.keys()].filter((c) => c.startsWith("E_DAEMON_")).sort()).toEqual([
      "E_DAEMON_READY",
      "E_DAEMON_START",
    ]);
    expect(codes.has("E_TOOL_VERSION")).toBe(true);
    expect(codes.has("E_TOOL")).toBe(false); // only a prefix
    expect(codes.has("E_DAEMON")).toBe(true); // a prefix and, elsewhere, a code of its own
    expect(codes.has("E_NOT_A_PREFIX")).toBe(true); // after the call's closing parenthesis: a literal
    expect([...codes.keys()].filter((c) => c.startsWith("E_NOT_A_PREFIX_"))).toEqual([]);
  });

  it("expands a kind family from the union type of its kind", () => {
    expect([...codes.keys()].filter((c) => c.startsWith("E_WIDGET_")).sort()).toEqual([
      "E_WIDGET_AUTH",
      "E_WIDGET_ROW_INVALID",
    ]);
    expect(problems).toEqual([]);
  });

  it("reports a family it cannot expand", () => {
    const r = scanCodes([{ file: "c.ts", text: "const c = `E_THING_${name}`;" }]);
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]).toContain("E_THING_");
  });

  it("reads the documented codes from table rows only", () => {
    const doc = documentedCodes(
      "intro `E_NOT_A_ROW`\n| code | meaning |\n|---|---|\n| `E_ROW` | something |\n",
    );
    expect([...doc.keys()]).toEqual(["E_ROW"]);
  });
});

describe("docs/errors.md", () => {
  const { codes, problems } = scanCodes(sourceFiles(ROOT, SOURCE_DIRS));
  const docFile = path.join(ROOT, "docs/errors.md");
  const documented = documentedCodes(existsSync(docFile) ? readFileSync(docFile, "utf8") : "");

  it("the scan understands every code the source builds", () => {
    expect(problems).toEqual([]);
    expect(codes.size).toBeGreaterThan(0);
  });

  it("documents every E_ code the source uses", () => {
    const missing = [...codes.keys()]
      .filter((c) => !documented.has(c))
      .sort()
      .map((c) => `${c} (used in ${[...codes.get(c)!].sort().join(", ")})`);
    expect(missing, `codes missing from docs/errors.md:\n${missing.join("\n")}`).toEqual([]);
  });

  it("documents no code the source no longer uses", () => {
    const stale = [...documented.keys()]
      .filter((c) => !codes.has(c))
      .sort()
      .map((c) => `${c} (docs/errors.md:${documented.get(c)})`);
    expect(stale, `codes in docs/errors.md that no source file uses:\n${stale.join("\n")}`).toEqual([]);
  });
});
