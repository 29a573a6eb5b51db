/**
 * The plugins' evidence (core/plugin.ts Evidence) is held to the tests: a plugin that says it is real in CI
 * (`level: "real-ci"`) needs a test whose title names it (its name, or its product name: the words of its `about`
 * before the first version number, colon or parenthesis) and says "real" (as a word). Titles are read from the
 * source of every test file vitest runs (test/**, plugins/**: the first argument of each it/test/describe call,
 * template literals as written), with the TypeScript compiler's parser. Run-once evidence names its version,
 * machine and date (YYYY-MM-DD).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import type { CollectorPlugin, SinkPlugin } from "../../core/plugin.ts";
import { allPlugins } from "../../plugins/registry.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** Every `*.test.ts` file under `dir` (relative to the repository root). */
function testFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const name of readdirSync(path.join(ROOT, rel))) {
      const child = `${rel}/${name}`;
      if (name === "node_modules") continue;
      if (statSync(path.join(ROOT, child)).isDirectory()) walk(child);
      else if (name.endsWith(".test.ts")) out.push(child);
    }
  };
  walk(dir);
  return out.sort();
}

/** The titles of the it/test/describe calls in `source` (also it.each(...)(title), describe.skip(title), …). */
function titlesOf(source: string, file = "x.test.ts"): string[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const root = (e: ts.Expression): string | undefined => {
    if (ts.isIdentifier(e)) return e.text;
    if (ts.isPropertyAccessExpression(e)) return root(e.expression);
    if (ts.isCallExpression(e)) return root(e.expression); // it.each(table)(title, …)
    return undefined;
  };
  const visit = (n: ts.Node): void => {
    if (ts.isCallExpression(n) && ["it", "test", "describe"].includes(root(n.expression) ?? "")) {
      const a = n.arguments[0];
      if (a && (ts.isStringLiteral(a) || ts.isNoSubstitutionTemplateLiteral(a))) out.push(a.text);
      else if (a && ts.isTemplateExpression(a)) out.push(a.getText(sf).slice(1, -1));
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** The product name of a plugin: its `about` up to the first version number, colon or parenthesis. */
function productName(p: Pick<SinkPlugin | CollectorPlugin, "about">): string {
  return p.about.split(/[:(]|\s(?=v?\d)/)[0]!.trim();
}

/** `word` in `text` as a whole word (case-insensitive; letters, digits and "-" make words). */
function hasWord(text: string, word: string): boolean {
  const w = word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(^|[^A-Za-z0-9-])${w}($|[^A-Za-z0-9-])`, "i").test(text);
}

/** The title says "real" (as a word), not negated by one of the three words before it ("no real Vector here"). */
function saysReal(title: string): boolean {
  for (const m of title.matchAll(/(^|[^A-Za-z0-9-])real($|[^A-Za-z0-9-])/gi)) {
    const before = title
      .slice(0, m.index)
      .split(/[^A-Za-z']+/)
      .filter(Boolean)
      .slice(-3);
    if (!before.some((w) => /^(no|not|non|without|never|isn't|aren't)$/i.test(w))) return true;
  }
  return false;
}

/** The titles that make `p`'s "real-ci" true: they name it (name or product name) and say "real". */
function realTitlesFor(p: Pick<SinkPlugin | CollectorPlugin, "name" | "about">, titles: string[]): string[] {
  return titles.filter((t) => saysReal(t) && (hasWord(t, p.name) || hasWord(t, productName(p))));
}

const titles = [...testFiles("test"), ...testFiles("plugins")].flatMap((f) =>
  titlesOf(readFileSync(path.join(ROOT, f), "utf8"), f),
);

describe("plugin evidence", () => {
  it("every plugin that says real in CI has a test titled with its name or product name and 'real'", () => {
    const missing = allPlugins
      .filter((p) => p.evidence.level === "real-ci" && realTitlesFor(p, titles).length === 0)
      .map((p) => `${p.name} (product "${productName(p)}")`);
    expect(missing, "real-ci without a real test naming it").toEqual([]);
    // the four real in CI today
    expect(allPlugins.filter((p) => p.evidence.level === "real-ci").map((p) => p.name)).toEqual(
      expect.arrayContaining(["postgres", "clickhouse", "syslog-ng", "rsyslog"]),
    );
  });

  it("run-once evidence names its version, machine and date; real-ci its version", () => {
    for (const p of allPlugins) {
      const e = p.evidence;
      if (e.level === "vectors") continue;
      expect(e.version.trim(), p.name).not.toBe("");
      if (e.level === "run-once") {
        expect(e.machine.trim(), p.name).not.toBe("");
        expect(e.date, p.name).toMatch(/^\d{4}-\d{2}-\d{2}$/);
        expect(Number.isNaN(Date.parse(e.date)), p.name).toBe(false);
      }
    }
  });

  it("reads titles from source and holds a plugin to them (the check itself, on sample source)", () => {
    const source = [
      'describe("syslog-ng → PostgreSQL pipeline (real)", () => {',
      "  it(`real ClickHouse ${v}: counts`, () => {});",
      '  it.each([1])("case %i of rsyslog", () => {});',
      '  test.skip("real: nosuch", () => {});',
      '  describe("vector renderer (no real Vector here: golden files)", () => {});',
      '  it("such, without a real server", () => {});',
      "  const x = describe;",
      "});",
    ].join("\n");
    const t = titlesOf(source);
    expect(t).toEqual([
      "syslog-ng → PostgreSQL pipeline (real)",
      "real ClickHouse ${v}: counts",
      "case %i of rsyslog",
      "real: nosuch",
      "vector renderer (no real Vector here: golden files)",
      "such, without a real server",
    ]);
    const plugin = (name: string, about: string) => ({ name, about });
    expect(realTitlesFor(plugin("postgres", "PostgreSQL: embedded 18.4"), t)).toHaveLength(1);
    expect(realTitlesFor(plugin("clickhouse", "ClickHouse: the installed one"), t)).toHaveLength(1);
    expect(realTitlesFor(plugin("rsyslog", "rsyslog 8.2302 built"), t)).toEqual([]); // named, not "real"
    expect(realTitlesFor(plugin("vector", "Vector 0.49.0 (timberio/vector)"), t)).toEqual([]); // "no real"
    // "without a real", and "nosuch" is not the word "such"
    expect(realTitlesFor(plugin("such", "Such 1.0"), t)).toEqual([]);
    expect(productName({ about: "OpenTelemetry Collector contrib 0.159.0 (otel/…)" })).toBe(
      "OpenTelemetry Collector contrib",
    );
    expect(productName({ about: "Fluent Bit 4.0.3 (fluent/fluent-bit)" })).toBe("Fluent Bit");
  });
});
