/**
 * Printed words have one home: ui/ (the number formatter, the run line and block, the tables) and harness/cli/ (the
 * commands). Every other source file under core/, plugins/, infra/, harness/ and bin/ must not write to stdout
 * (`process.stdout.write`, `console.log`/`info`/`table`) nor build a terminal table (an import of cli-table3), apart
 * from the files of ALLOWED, each with why. A file that moves to ui/ leaves the list (it only shrinks): an entry
 * whose file no longer does it fails too.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { sourceFiles } from "../helpers/source-files.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SCANNED = ["core", "plugins", "infra", "harness", "bin"];
const HOMES = ["ui/", "harness/cli/"];

/** What counts as printing: a write to stdout, a console print, a terminal table. */
const PRINTS: ReadonlyArray<[string, RegExp]> = [
  ["process.stdout.write", /\bprocess\.stdout\.write\b/],
  ["console.log", /\bconsole\.(log|info|table)\(/],
  ["cli-table3", /\bfrom\s+["']cli-table3["']|require\(["']cli-table3["']\)/],
];

/** Files that print outside ui/ and harness/cli/, and why: words for programs, not for people. */
const ALLOWED: Record<string, string> = {
  // permanent: not words for people
  "harness/generators/child.ts": "the generators' JSON-lines channel to their parent process",
  "bin/build-cli-bundle.mjs": "a build script: the bundle's files, for the build log",
};

/** Every source file under `dir` (test/helpers/source-files.ts). */
const sources = (dir: string): string[] => sourceFiles(ROOT, dir);

/** The code of a file without its comments (a comment may name cli-table3 or console.log). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}

describe("printed words live in ui/ and harness/cli/", () => {
  const printing = new Map<string, string[]>();
  for (const file of SCANNED.flatMap(sources)) {
    if (HOMES.some((h) => file.startsWith(h))) continue;
    const text = code(readFileSync(path.join(ROOT, file), "utf8"));
    const what = PRINTS.filter(([, re]) => re.test(text)).map(([name]) => name);
    if (what.length) printing.set(file, what);
  }

  it("no file outside ui/ and harness/cli/ writes to stdout or builds a table, but those allowed", () => {
    const bad = [...printing]
      .filter(([file]) => !(file in ALLOWED))
      .map(([file, what]) => `${file}: ${what.join(", ")}`);
    expect(bad).toEqual([]);
  });

  it("every allowed file still prints (the list only shrinks: a file that moved to ui/ leaves it)", () => {
    expect(Object.keys(ALLOWED).filter((f) => !printing.has(f))).toEqual([]);
    expect(Object.keys(ALLOWED).length).toBeLessThanOrEqual(2);
  });

  it("finds a print where there is one (the scanner itself)", () => {
    expect(printing.get("harness/generators/child.ts")).toContain("process.stdout.write");
    expect(code('const t = 1; // console.log("x")\n/* import Table from "cli-table3" */')).not.toMatch(
      /console|cli-table3/,
    );
  });
});
