/**
 * The runner's shape (issue 30 item 6): a run is a short list of phase functions (harness/runner/run.ts and
 * harness/runner/phases/), each function short, and the run does not branch on its load mode.
 *
 * - No function, method, accessor, constructor or arrow function under harness/runner/ has a body over MAX_LINES
 *   lines (from its first line to its last, as the TypeScript parser reads it). A failure lists file:line:name.
 * - The load mode (generator processes, an application under test, `generator: none`; ./load.ts `Load`) is decided
 *   in harness/runner/load.ts and the three load modules only: run.ts and the phases name none of the plan's mode
 *   fields (`app`, `selfLoad`) nor the concrete loads (AppRun, CollectorLoad, GeneratorGroup); the query's mode
 *   (`during`) is decided in phases/query.ts only. The rule is checked on sample code below, so it can fail.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const RUNNER = "harness/runner";
const MAX_LINES = 80;

/** Every .ts file under harness/runner/, relative to the root. */
function runnerFiles(rel = RUNNER): string[] {
  return readdirSync(path.join(ROOT, rel)).flatMap((name) => {
    const child = `${rel}/${name}`;
    if (statSync(path.join(ROOT, child)).isDirectory()) return runnerFiles(child);
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [child] : [];
  });
}

function parse(file: string, text: string): ts.SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
}

/** A function-like node's name as a reader finds it: its own, or the variable/property it is assigned to. */
function nameOf(node: ts.FunctionLikeDeclaration): string {
  if (node.name) return node.name.getText();
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const p = node.parent;
  if (p && (ts.isVariableDeclaration(p) || ts.isPropertyDeclaration(p) || ts.isPropertyAssignment(p)))
    return p.name.getText();
  return "(anonymous)";
}

/** The functions of `text` whose body spans more than `max` lines, as "file:line:name (N lines)". */
export function longFunctions(file: string, text: string, max = MAX_LINES): string[] {
  const source = parse(file, text);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const body = node.body as ts.Node;
      const first = source.getLineAndCharacterOfPosition(body.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(body.getEnd()).line;
      const lines = last - first + 1;
      if (lines > max)
        found.push(`${file}:${first + 1}:${nameOf(node as ts.FunctionLikeDeclaration)} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Names that decide the load mode, and where they may appear (file path prefixes under harness/runner/). */
const MODE_NAMES = new Map<string, { why: string; allowedIn: string[] }>(
  Object.entries({
    app: { why: "the plan's application under test (plan.app)", allowedIn: [] },
    selfLoad: { why: "the plan's `generator: none` (plan.selfLoad)", allowedIn: [] },
    AppRun: { why: "the application-under-test load", allowedIn: [] },
    CollectorLoad: { why: "the `generator: none` load", allowedIn: [] },
    GeneratorGroup: { why: "the generator processes' load", allowedIn: [] },
    during: { why: "the query phase's mode (during: ingest)", allowedIn: [`${RUNNER}/phases/query.ts`] },
  }),
);

/** Files held to the mode rule: the run and its phases. */
const MODE_FREE = (file: string): boolean =>
  file === `${RUNNER}/run.ts` || file.startsWith(`${RUNNER}/phases/`);

/**
 * Where `text` names a load-mode field or load class outside its home, as "file:line: name (why)": a property access
 * (`plan.app`, `x.selfLoad`), a property name in a binding or object literal (`{ app }`), an identifier (`AppRun`), or
 * a string compared with `"none"` (a `generator: none` check).
 */
export function modeChecks(file: string, text: string): string[] {
  const source = parse(file, text);
  const found: string[] = [];
  const at = (node: ts.Node, what: string): void => {
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    found.push(`${file}:${line}: ${what}`);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node)) {
      const rule = MODE_NAMES.get(node.text);
      if (rule && !rule.allowedIn.includes(file)) at(node, `${node.text} (${rule.why})`);
    }
    if (ts.isStringLiteral(node) && node.text === "none" && ts.isBinaryExpression(node.parent))
      at(node, `"none" compared (a generator: none check)`);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("the runner's shape", () => {
  const files = runnerFiles();

  it(`has no function over ${MAX_LINES} lines under ${RUNNER}/`, () => {
    const long = files.flatMap((f) => longFunctions(f, readFileSync(path.join(ROOT, f), "utf8")));
    expect(long).toEqual([]);
  });

  it("finds a long function, an arrow and a method by file:line:name (the rule itself)", () => {
    const body = Array.from({ length: 81 }, (_, i) => `  x += ${i};`).join("\n");
    const sample = [
      `function long(): void {\n  let x = 0;\n${body}\n}`,
      `const arrow = () => {\n${body}\n};`,
      `class K {\n  method(): void {\n${body}\n  }\n  short(): void {}\n}`,
    ].join("\n");
    const found = longFunctions("sample.ts", sample);
    expect(found).toHaveLength(3);
    expect(found[0]).toMatch(/^sample\.ts:1:long \(84 lines\)$/);
    expect(found[1]).toMatch(/:arrow \(83 lines\)$/);
    expect(found[2]).toMatch(/:method \(83 lines\)$/);
    expect(longFunctions("sample.ts", "function short(): void {\n  return;\n}\n")).toEqual([]);
  });

  it("the run and its phases do not check the load mode", () => {
    const checks = files
      .filter(MODE_FREE)
      .flatMap((f) => modeChecks(f, readFileSync(path.join(ROOT, f), "utf8")));
    expect(checks).toEqual([]);
    // the rule covers the run and at least one phase
    expect(files.filter(MODE_FREE).length).toBeGreaterThan(1);
  });

  it("finds a load-mode check in sample code (the rule itself)", () => {
    const sample = [
      "const load = plan.app ? startApp() : plan.selfLoad ? collectorLoad() : generators();",
      'if (plan.generator.name === "none") skip();',
      'const mixed = plan.query?.during === "ingest";',
      "const { app } = record;",
      "let g: GeneratorGroup;",
    ].join("\n");
    const found = modeChecks(`${RUNNER}/run.ts`, sample);
    expect(found).toEqual([
      `${RUNNER}/run.ts:1: app (the plan's application under test (plan.app))`,
      `${RUNNER}/run.ts:1: selfLoad (the plan's \`generator: none\` (plan.selfLoad))`,
      `${RUNNER}/run.ts:2: "none" compared (a generator: none check)`,
      `${RUNNER}/run.ts:3: during (the query phase's mode (during: ingest))`,
      `${RUNNER}/run.ts:4: app (the plan's application under test (plan.app))`,
      `${RUNNER}/run.ts:5: GeneratorGroup (the generator processes' load)`,
    ]);
    // the query's mode is decided in its phase
    expect(modeChecks(`${RUNNER}/phases/query.ts`, "const m = plan.query?.during;")).toEqual([]);
    expect(modeChecks(`${RUNNER}/run.ts`, "const load = await startLoad(ctx, entries);")).toEqual([]);
  });
});
