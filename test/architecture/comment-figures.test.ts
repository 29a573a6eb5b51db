/**
 * Measurement figures and their histories live in docs/measurements.md, not in code comments (the developers' brief):
 * a comment says why the code is as it is and points to the figures ("docs/measurements.md, Figures moved from code
 * comments"). This fails when a comment of a source file under core/, plugins/, infra/, harness/, ui/ or bin/ names a
 * CPU model (where it was measured) or carries a dated measurement. Comments are found by TypeScript's scanner, so a
 * string or a regular expression that names a CPU (harness/results/fingerprint.ts reads /proc/cpuinfo) is not one.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { sourceFiles } from "../helpers/source-files.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SCANNED = ["core", "plugins", "infra", "harness", "ui", "bin"];

/** What a comment must not carry, each with its name. */
const RULES: ReadonlyArray<[string, RegExp]> = [
  // the CPU a figure was measured on: AMD's and Intel's server and desktop lines, Arm's cloud parts
  ["a CPU model", /\b(Xeon|EPYC|Opteron|Ryzen|Threadripper|Graviton|Ampere Altra|Core i[3579]-?\d*)\b/i],
  // a dated measurement: "2 cores, 2026-12-05", "measured … on 2026-12-05", "(… 6.1 s …, 2026-12-05)"
  ["a dated measurement (cores)", /\b\d+[- ]cores?\b[^.;]{0,60}\b20\d\d-\d\d-\d\d\b/i],
  ["a dated measurement (measured)", /\bmeasured\b[^.;]{0,80}\b20\d\d-\d\d-\d\d\b/i],
  [
    "a dated measurement (figure)",
    /\b\d[\d.,]*\s?(ms|s|MiB|GiB|MB|GB|rows\/s|events\/s|%)[^.;]{0,40}\b20\d\d-\d\d-\d\d\b/,
  ],
];

/** Every source file under `dir` (test/helpers/source-files.ts). */
const sources = (dir: string): string[] => sourceFiles(ROOT, dir);

/** The comments of `text` (TypeScript's scanner), each as one line of prose with its first line number. */
function comments(text: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, text);
  const lineOf = (pos: number): number => text.slice(0, pos).split("\n").length;
  let prevLine = -2;
  for (let k = scanner.scan(); k !== ts.SyntaxKind.EndOfFileToken; k = scanner.scan()) {
    if (k !== ts.SyntaxKind.SingleLineCommentTrivia && k !== ts.SyntaxKind.MultiLineCommentTrivia) continue;
    const raw = scanner.getTokenText();
    const line = lineOf(scanner.getTokenPos());
    const prose = raw
      .replace(/^\/\*+|\*+\/$/g, "")
      .replace(/^\/\//, "")
      .replace(/\n\s*\*/g, "\n")
      .replace(/\s+/g, " ")
      .trim();
    // consecutive // lines, each alone on its line, are one comment
    const alone =
      k === ts.SyntaxKind.SingleLineCommentTrivia &&
      /^[ \t]*$/.test(
        text.slice(text.lastIndexOf("\n", scanner.getTokenPos() - 1) + 1, scanner.getTokenPos()),
      );
    if (alone && line === prevLine + 1 && out.length) out[out.length - 1]!.text += ` ${prose}`;
    else out.push({ line, text: prose });
    prevLine = alone ? line : -2;
  }
  return out;
}

/** The rules a comment breaks, by name. */
function broken(comment: string): string[] {
  return RULES.filter(([, re]) => re.test(comment)).map(([name]) => name);
}

describe("measurement figures live in docs/measurements.md, not in code comments", () => {
  it("no source comment names a CPU model or carries a dated measurement", () => {
    const bad: string[] = [];
    for (const file of SCANNED.flatMap(sources))
      for (const c of comments(readFileSync(path.join(ROOT, file), "utf8"))) {
        const rules = broken(c.text);
        if (rules.length) bad.push(`${file}:${c.line}: ${rules.join(", ")}: ${c.text.slice(0, 100)}`);
      }
    expect(bad).toEqual([]);
  });

  it("the rules catch what they are for (samples from the comments moved) and pass what is not a figure", () => {
    const sample = `
/**
 * The settle query beside that pass cost the sink a second backend's CPU: on 10M rows of the quickstart's shape,
 * 6.1 s warm of the pass's 8.6 s (Intel Xeon, 2 cores, 2026-12-05; docs/measurements.md).
 */
const settle = 1;
// measured on AMD EPYC, 2 cores, kernel 6.18, cgroup v1: syslog-ng 3.38 started under a 2 MiB memory cap and was
// OOM-killed at start under 1 MiB
const floor = 2;
/* the first pass took 8.6 s on 2026-12-05 (a figure with its date, no CPU named) */
const cpu = /model name\\s*:\\s*(Intel\\(R\\) Xeon.*)/; // a regular expression is code, not a comment
const name = "AMD EPYC 7B13"; // a string is code
/** Timestamps are BASE_EPOCH_MS (2024-11-07T00:00:00Z) + seq milliseconds: a date, not a measurement. */
`;
    const found = comments(sample).map((c) => [c.line, broken(c.text)] as const);
    expect(found).toEqual([
      [2, ["a CPU model", "a dated measurement (cores)", "a dated measurement (figure)"]],
      [7, ["a CPU model"]],
      [10, ["a dated measurement (figure)"]],
      [11, []],
      [12, []],
      [13, []],
    ]);
  });
});
